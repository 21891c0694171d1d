package io.dynnibal.watch;

import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.training.ProgressBar;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;

/**
 * A live view of a running job from its metrics topic ({@code dynnibal watch}): one progress line,
 * redrawn as the trainer's reports arrive (committed ones only: what the job's exactly-once sink
 * has published), plus a line for each evaluation.
 *
 * <p>{@code watch} starts near the end of the topic and follows the latest run (each report names
 * its run), switching when a newer run starts; it can also follow one run or all, from the
 * beginning. The demo and the experiments read their own runs' topics from the beginning.
 */
public final class MetricsWatch {
  /**
   * What the view saw: the first and last report, how many. Both reports are null when none came.
   */
  public record Seen(TrainingMetrics first, TrainingMetrics last, long reports) {}

  /** Which runs a view shows: the latest (switching to newer ones), one, or all. */
  public record Runs(String only, boolean all) {
    public static final Runs LATEST = new Runs(null, false);
    public static final Runs ALL = new Runs(null, true);

    public static Runs only(String runId) {
      return new Runs(runId, false);
    }
  }

  /** Reports read back from the end of the topic when a view starts there. */
  static final int TAIL = 64;

  private MetricsWatch() {}

  /** The run a report belongs to ("" for jobs that did not name their runs). */
  public static String runOf(TrainingMetrics m) {
    return m.getRunId() == null ? "" : m.getRunId();
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
   * How a view follows a topic: its bar ({@code label}, {@code plannedSteps}: the job's {@code
   * max.steps}, 0 draws a moving mark), which {@code runs}, read from the beginning or, with {@code
   * fromEnd}, from the topic's last {@value #TAIL} reports; until a report reaches {@code
   * untilStep} (0: never) or none has come for {@code idle} (null: wait forever), {@code
   * idleBeforeFirst} apart before the first (a job indexes the targets on the topic before its
   * first step: minutes for a transformer on a large corpus); each report handed to {@code
   * onReport}, {@code check} run between polls.
   */
  public record Following(
      String label,
      Runs runs,
      boolean fromEnd,
      long plannedSteps,
      long untilStep,
      Duration idle,
      Duration idleBeforeFirst,
      Consumer<TrainingMetrics> onReport,
      Check check) {
    /** Every run from the beginning, until {@code untilStep} or {@code idle} without a report. */
    public static Following until(long untilStep, Duration idle) {
      return new Following(
          "training", Runs.ALL, false, 0, untilStep, idle, idle, m -> {}, () -> {});
    }

    public Following bar(String label, long plannedSteps) {
      return new Following(
          label, runs, fromEnd, plannedSteps, untilStep, idle, idleBeforeFirst, onReport, check);
    }

    public Following runs(Runs runs, boolean fromEnd) {
      return new Following(
          label, runs, fromEnd, plannedSteps, untilStep, idle, idleBeforeFirst, onReport, check);
    }

    public Following idleBeforeFirst(Duration idleBeforeFirst) {
      return new Following(
          label, runs, fromEnd, plannedSteps, untilStep, idle, idleBeforeFirst, onReport, check);
    }

    public Following onReport(Consumer<TrainingMetrics> onReport) {
      return new Following(
          label, runs, fromEnd, plannedSteps, untilStep, idle, idleBeforeFirst, onReport, check);
    }

    public Following check(Check check) {
      return new Following(
          label, runs, fromEnd, plannedSteps, untilStep, idle, idleBeforeFirst, onReport, check);
    }
  }

  /**
   * Follows {@code topic} as {@code how} says, or until the thread is interrupted. Following the
   * latest run, a report of another run than the one shown starts a new view (it is newer: the
   * topic is in order).
   *
   * @param out where the view is drawn; null draws nothing
   */
  public static Seen follow(Properties kafka, String topic, Following how, PrintStream out)
      throws Exception {
    Runs runs = how.runs();
    long plannedSteps = how.plannedSteps();
    ProgressBar bar = new ProgressBar(out, how.label(), plannedSteps);
    boolean switching = !runs.all() && runs.only() == null;
    TrainingMetrics first = null;
    TrainingMetrics last = null;
    long reports = 0;
    long lastReport = System.nanoTime();
    try (TopicReader<TrainingMetrics> reader =
        how.fromEnd()
            ? TopicReader.fromLast(kafka, topic, TrainingMetrics.class, TAIL)
            : new TopicReader<>(kafka, topic, TrainingMetrics.class)) {
      // From the end, the latest run is the last report of the tail: the older runs' reports
      // before it are skipped rather than shown and replaced.
      List<TrainingMetrics> polled = switching && how.fromEnd() ? drain(reader) : List.of();
      String latest = polled.isEmpty() ? null : runOf(polled.get(polled.size() - 1));
      while (!Thread.currentThread().isInterrupted()) {
        how.check().run();
        if (polled.isEmpty()) {
          polled = reader.poll(Duration.ofMillis(500));
        }
        for (TrainingMetrics m : polled) {
          String run = runOf(m);
          if (runs.only() != null && !runs.only().equals(run)) {
            continue;
          }
          if (latest != null) {
            if (!latest.equals(run)) {
              continue;
            }
            latest = null;
          }
          if (switching && last != null && !run.equals(runOf(last))) {
            draw(bar, plannedSteps, last, true); // a newer run: start over
            first = null;
            reports = 0;
          }
          if (!runs.all() && first == null && out != null && !run.isEmpty()) {
            out.printf("run %s%n", run);
          }
          first = first == null ? m : first;
          last = m;
          reports++;
          how.onReport().accept(m);
          lastReport = System.nanoTime();
          if (!m.getEvalRecall().isEmpty() && out != null) {
            draw(bar, plannedSteps, m, true);
            out.printf("  evaluation at step %d: %s%n", m.getStep(), m.getEvalRecall());
          }
        }
        polled = List.of();
        if (last != null) {
          draw(bar, plannedSteps, last, false);
          if (how.untilStep() > 0 && last.getStep() >= how.untilStep()) {
            break;
          }
        }
        Duration limit = last == null ? how.idleBeforeFirst() : how.idle();
        if (limit != null && System.nanoTime() - lastReport > limit.toNanos()) {
          break;
        }
      }
    }
    if (last != null) {
      draw(bar, plannedSteps, last, true);
    }
    return new Seen(first, last, reports);
  }

  /** What the reader holds now: polls until one returns nothing (the tail is read). */
  private static List<TrainingMetrics> drain(TopicReader<TrainingMetrics> reader) {
    List<TrainingMetrics> all = new ArrayList<>();
    for (int polls = 0; polls < 20; polls++) {
      List<TrainingMetrics> polled = reader.poll(Duration.ofMillis(500));
      if (polled.isEmpty() && polls > 0) {
        break;
      }
      all.addAll(polled);
    }
    return all;
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
    String text =
        String.format(
            "loss %.3f  %.1f steps/s  re-encodes %d  staleness %d",
            m.getLoss(), m.getStepsPerSecond(), m.getReencodeCycles(), m.getCacheStalenessSteps());
    if (m.getTrainerIdleFraction() != null) {
      // The share of the time the trainer waited for the shards and the merge since it started.
      text += String.format("  trainer idle %.0f%%", 100 * m.getTrainerIdleFraction());
    }
    Map<String, Double> f = m.getFidelityRunMean();
    if (f.containsKey("mass_ratio")) {
      text +=
          String.format(
              "  fidelity mass %.2f logit %.2f overlap %.2f",
              f.get("mass_ratio"),
              f.getOrDefault("logit_ratio", Double.NaN),
              f.getOrDefault("overlap_topk", Double.NaN));
      if (f.containsKey("normaliser_error")) {
        // log of the shards' softmax normaliser over the exact one: what the correction rests on.
        text += String.format(" normaliser %+.2f", f.get("normaliser_error"));
      }
    }
    return text;
  }
}
