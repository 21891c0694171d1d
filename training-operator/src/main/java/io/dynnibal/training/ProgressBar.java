package io.dynnibal.training;

import java.io.PrintStream;

/**
 * A progress bar on one terminal line ({@code label [#####.....] done/total detail}), redrawn at
 * most four times a second; every command that shows progress uses it. A null stream draws nothing.
 */
public final class ProgressBar {
  private static final int WIDTH = 30;
  private static final long REDRAW_NANOS = 250_000_000L;

  private final PrintStream out;
  private final String label;
  private final long total;
  private long lastDraw;

  public ProgressBar(PrintStream out, String label, long total) {
    this.out = out;
    this.label = label;
    this.total = total;
  }

  /** {@code done < 0}: progress unknown (a moving mark instead of a count). */
  public void draw(long done, String detail) {
    long now = System.nanoTime();
    if (out == null || (lastDraw != 0 && now - lastDraw < REDRAW_NANOS)) {
      return;
    }
    lastDraw = now;
    if (done < 0) {
      int pos = (int) ((now / REDRAW_NANOS) % WIDTH);
      out.printf(
          "\r%-9s [%s] %s   ", label, ".".repeat(pos) + "#" + ".".repeat(WIDTH - pos - 1), detail);
    } else {
      int filled = (int) Math.min(WIDTH, WIDTH * done / Math.max(1, total));
      out.printf(
          "\r%-9s [%s] %d/%d  %s   ",
          label, "#".repeat(filled) + ".".repeat(WIDTH - filled), done, total, detail);
    }
    out.flush();
  }

  /** Draws the final state and ends the line. */
  public void finish(long done, String detail) {
    if (out == null) {
      return;
    }
    lastDraw = 0;
    draw(done, detail);
    out.println();
  }
}
