package io.dynnibal.deploy;

import java.time.Duration;

/**
 * How long a supervisor waits before starting a process that exited: 1 s after the first exit,
 * doubling with each exit that follows a short run, at most 60 s; a process that ran for a minute
 * or more counts as healthy again and is restarted after 1 s.
 *
 * <p>Why back off at all: a process that dies at start (a port taken, a broken configuration) would
 * otherwise be restarted in a tight loop, flooding its log and taking the machine's cores.
 */
final class RestartBackoff {
  static final Duration FIRST = Duration.ofSeconds(1);
  static final Duration MAX = Duration.ofSeconds(60);
  static final Duration STABLE = Duration.ofSeconds(60);

  private Duration last;

  /** The wait before the next start, for a process that exited after running {@code uptime}. */
  Duration after(Duration uptime) {
    if (last == null || uptime.compareTo(STABLE) >= 0) {
      last = FIRST;
    } else {
      Duration doubled = last.multipliedBy(2);
      last = doubled.compareTo(MAX) > 0 ? MAX : doubled;
    }
    return last;
  }
}
