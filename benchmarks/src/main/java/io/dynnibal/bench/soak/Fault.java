package io.dynnibal.bench.soak;

/** The faults, injected in this order, round and round. */
public enum Fault {
  /** SIGKILL to a TaskManager (the two take turns); the supervisor starts a replacement. */
  TASKMANAGER_KILL,
  /** SIGKILL to the broker, started again on the same data after 5 s. */
  BROKER_KILL,
  /** The trainer's task fails before a step (setting {@code fault.drill.file}). */
  TASK_EXCEPTION,
  /** Garbage bytes, pairs naming unknown targets and empty queries: dead letters, no failure. */
  BAD_RECORDS,
  /**
   * SIGSTOP to a TaskManager past the heartbeat timeout, then SIGCONT: the job is restored while
   * the paused process holds its tasks, which resume as zombies until told they were replaced.
   */
  TASKMANAGER_PAUSE,
  /** The model versions' disk is full for a while: updates pause, training goes on. */
  DISK_FULL
}
