package io.dynnibal.deploy;

/**
 * Cleanup that runs if this JVM exits (Ctrl-C, SIGTERM) before {@link #close}: the servers run in
 * sessions of their own, so a command interrupted while it starts or drives them stops them itself.
 */
public final class CleanupOnExit implements AutoCloseable {
  private final Thread hook;

  private CleanupOnExit(Thread hook) {
    this.hook = hook;
  }

  /** Registers {@code cleanup} until {@link #close}. */
  public static CleanupOnExit register(Runnable cleanup) {
    Thread hook = new Thread(cleanup);
    Runtime.getRuntime().addShutdownHook(hook);
    return new CleanupOnExit(hook);
  }

  /** The work finished (or failed) normally: nothing to clean up on exit any more. */
  @Override
  public void close() {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // the JVM is exiting: the hook runs
    }
  }
}
