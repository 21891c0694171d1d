package io.dynnibal.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ProgressBarTest {
  private final AtomicLong clock = new AtomicLong(1);
  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);

  private String written() {
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void withoutATerminalItWritesPlainLinesAtMostEveryTenSeconds() {
    ProgressBar bar = new ProgressBar(out, "training", 100, false, clock::get);
    for (int step = 1; step <= 100; step++) {
      clock.addAndGet(1_000_000_000L); // one step a second
      bar.draw(step, "loss 0.5   ");
    }
    bar.finish(100, "loss 0.1");
    String log = written();
    assertFalse(log.contains("\r"), "no carriage return in a log");
    String[] lines = log.split("\n");
    assertEquals(11, lines.length, log); // steps 1, 11, ..., 91 and the final line
    assertEquals("training  1/100  loss 0.5", lines[0]);
    assertEquals("training  100/100  loss 0.1", lines[10]);
  }

  @Test
  void onATerminalItRedrawsOneLineInPlace() {
    ProgressBar bar = new ProgressBar(out, "indexing", -1, true, clock::get);
    bar.draw(-1, "12 targets");
    clock.addAndGet(300_000_000L);
    bar.draw(-1, "40 targets");
    bar.finish(-1, "done");
    String drawn = written();
    assertEquals(3, drawn.chars().filter(c -> c == '\r').count());
    assertTrue(drawn.endsWith("\n") && drawn.indexOf('\n') == drawn.length() - 1);
  }

  @Test
  void aNullStreamDrawsNothing() {
    ProgressBar bar = new ProgressBar(null, "x", 1, false, clock::get);
    bar.draw(1, "a");
    bar.finish(1, "b");
    assertEquals("", written());
  }
}
