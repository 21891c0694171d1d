package io.dynnibal.training;

import java.io.PrintStream;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * Progress of a long command, drawn for where it lands; every command that shows progress uses it.
 *
 * <ul>
 *   <li>On a terminal: one line ({@code label [#####.....] done/total detail}) redrawn in place at
 *       most four times a second.
 *   <li>Anywhere else (a log file, CI output, a pipe): a plain line with the same fields every
 *       {@value #LOG_SECONDS} seconds, and the last one at {@link #finish}; no carriage returns.
 * </ul>
 *
 * The environment variable {@code DYNNIBAL_PROGRESS} ({@code bar} or {@code lines}) overrides the
 * choice. A null stream draws nothing.
 */
public final class ProgressBar {
  private static final int WIDTH = 30;
  private static final long REDRAW_NANOS = 250_000_000L;
  static final long LOG_SECONDS = 10;

  private final PrintStream out;
  private final String label;
  private final long total;
  private final boolean terminal;
  private final LongSupplier nanos;
  private long lastDraw;
  private boolean drawn;

  public ProgressBar(PrintStream out, String label, long total) {
    this(out, label, total, onTerminal(), System::nanoTime);
  }

  ProgressBar(PrintStream out, String label, long total, boolean terminal, LongSupplier nanos) {
    this.out = out;
    this.label = label;
    this.total = total;
    this.terminal = terminal;
    this.nanos = nanos;
  }

  /**
   * Whether progress goes to a terminal: {@code DYNNIBAL_PROGRESS} if set, else whether this JVM
   * has a console (none when its output is redirected).
   */
  static boolean onTerminal() {
    String mode = System.getenv("DYNNIBAL_PROGRESS");
    if (mode != null && !mode.isBlank()) {
      return mode.trim().toLowerCase(Locale.ROOT).equals("bar");
    }
    return System.console() != null;
  }

  /** {@code done < 0}: progress unknown (a moving mark instead of a count). */
  public void draw(long done, String detail) {
    long now = nanos.getAsLong();
    long interval = terminal ? REDRAW_NANOS : LOG_SECONDS * 1_000_000_000L;
    if (out == null || (drawn && now - lastDraw < interval)) {
      return;
    }
    lastDraw = now;
    drawn = true;
    if (!terminal) {
      out.println(line(done, detail));
    } else if (done < 0) {
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
    drawn = false;
    draw(done, detail);
    if (terminal) {
      out.println();
    }
  }

  /** The plain form: {@code label done/total detail}, or {@code label detail} when unknown. */
  private String line(long done, String detail) {
    String count = done < 0 ? "" : done + (total > 0 ? "/" + total : "") + "  ";
    return String.format("%-9s %s%s", label, count, detail.strip());
  }
}
