package io.dynnibal.deploy;

import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.training.ProgressBar;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.function.Consumer;

/**
 * A live view of a running job from its metrics topic ({@code dynnibal watch}): one progress line,
 * redrawn as the trainer's reports arrive (committed ones only: what the job's exactly-once sink
 * has published), plus a line for each evaluation. Reads the topic from its beginning, so a view
 * started late catches up at once.
 */
public final class MetricsWatch {
  /**
   * What the view saw: the first and last report, how many. Both reports are null when none came.
   */
  public record Seen(TrainingMetrics first, TrainingMetrics last, long reports) {}

  private MetricsWatch() {}

  /**
   * Follows {@code topic} until a report reaches {@code untilStep} (0: never), or no report has
   * come for {@code idle} (null: wait forever), or the thread is interrupted.
   *
   * @param plannedSteps the bar's total (the job's {@code max.steps}); 0 draws a moving mark
   * @param out where the view is drawn; null draws nothing
   */
  public static Seen follow(
      Properties kafka,
      String topic,
      long plannedSteps,
      long untilStep,
      Duration idle,
      PrintStream out)
      throws Exception {
    return follow(kafka, topic, "training", plannedSteps, untilStep, idle, m -> {}, () -> {}, out);
  }

  /**
   * What a follower checks between polls (e.g. that its job still runs); an exception ends the
   * follow.
   */
  @FunctionalInterface
  public interface Check {
    void run() throws Exception;
  }

  /**
   * The same, with the bar labelled {@code label}, each report handed to {@code onReport} as it
   * arrives and {@code check} run between polls: how the demo and the experiments follow the jobs
   * they start.
   */
  public static Seen follow(
      Properties kafka,
      String topic,
      String label,
      long plannedSteps,
      long untilStep,
      Duration idle,
      Consumer<TrainingMetrics> onReport,
      Check check,
      PrintStream out)
      throws Exception {
    ProgressBar bar = new ProgressBar(out, label, plannedSteps);
    TrainingMetrics first = null;
    TrainingMetrics last = null;
    long reports = 0;
    long lastReport = System.nanoTime();
    try (TopicReader<TrainingMetrics> reader =
        new TopicReader<>(kafka, topic, TrainingMetrics.class)) {
      while (!Thread.currentThread().isInterrupted()) {
        check.run();
        List<TrainingMetrics> polled = reader.poll(Duration.ofMillis(500));
        for (TrainingMetrics m : polled) {
          first = first == null ? m : first;
          last = m;
          reports++;
          onReport.accept(m);
          lastReport = System.nanoTime();
          if (!m.getEvalRecall().isEmpty() && out != null) {
            draw(bar, plannedSteps, m, true);
            out.printf("  evaluation at step %d: %s%n", m.getStep(), m.getEvalRecall());
          }
        }
        if (last != null) {
          draw(bar, plannedSteps, last, false);
          if (untilStep > 0 && last.getStep() >= untilStep) {
            break;
          }
        }
        if (idle != null && System.nanoTime() - lastReport > idle.toNanos()) {
          break;
        }
      }
    }
    if (last != null) {
      draw(bar, plannedSteps, last, true);
    }
    return new Seen(first, last, reports);
  }

  /** Without a planned total the bar is a moving mark and the step goes into the text. */
  private static void draw(ProgressBar bar, long plannedSteps, TrainingMetrics m, boolean endLine) {
    long done = plannedSteps > 0 ? m.getStep() : -1;
    String text =
        (plannedSteps > 0 ? "" : "step " + m.getStep() + "  ")
            + describe(m)
            + "  pairs "
            + m.getPairsTrained()
            + "  dead-lettered "
            + m.getPairsDeadLettered();
    if (endLine) {
      bar.finish(done, text);
    } else {
      bar.draw(done, text);
    }
  }

  /** One report as the progress bars show it (the demo's too). */
  public static String describe(TrainingMetrics m) {
    return String.format(
        "loss %.3f  %.1f steps/s  re-encodes %d  staleness %d",
        m.getLoss(), m.getStepsPerSecond(), m.getReencodeCycles(), m.getCacheStalenessSteps());
  }
}
