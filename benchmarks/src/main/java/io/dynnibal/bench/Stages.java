package io.dynnibal.bench;

import io.dynnibal.training.ProgressBar;
import java.io.PrintStream;

/**
 * A benchmark's progress on its progress stream: one line as each of its {@code count} stages
 * starts ({@code label [2/5] repairing the tree}), and a {@link ProgressBar} for a stage that
 * loops. A null stream shows nothing, so a benchmark run from a test stays quiet.
 */
public final class Stages {
  private final PrintStream out;
  private final String label;
  private final int count;
  private int started;

  public Stages(PrintStream out, String label, int count) {
    this.out = out;
    this.label = label;
    this.count = count;
  }

  /** The next stage begins. */
  public void next(String what) {
    started++;
    if (out != null) {
      out.printf("%s [%d/%d] %s%n", label, started, count, what);
      out.flush();
    }
  }

  /** A bar for {@code total} units of the current stage, drawn where this stream goes. */
  public ProgressBar bar(String unit, long total) {
    return new ProgressBar(out, unit, total);
  }
}
