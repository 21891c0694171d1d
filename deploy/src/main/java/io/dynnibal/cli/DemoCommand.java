package io.dynnibal.cli;

import io.dynnibal.cli.options.JsonOutput;
import io.dynnibal.eval.RetrievalMetrics;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.local.Corpus;
import io.dynnibal.local.Demo;
import io.dynnibal.schemas.TrainingMetrics;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code dynnibal demo}: the streaming job end to end on one machine, on the bundled Debian corpus
 * by default.
 */
@Command(
    name = "demo",
    description = {
      "Fine-tune the bundled pretrained MiniLM with DyNNIBAL-MH negatives on the bundled Debian corpus.",
      "End to end on this machine: an in-process Kafka broker and a Flink MiniCluster (parallelism 2, RocksDB state,",
      "checkpoints), a progress bar, and a table of dev recall for BM25, the encoder before training (zero-shot) and",
      "after, on the same queries; --json FILE also writes the figures as JSON. The transformer trains one epoch on a",
      "subset of 6,000 targets (those of 1,000 dev queries first, then those training pairs name) and their pairs;",
      "--tower bag trains a bag-of-n-grams tower from scratch on the whole corpus. About 5 minutes on 2 cores."
    })
public final class DemoCommand implements Callable<Integer> {
  @Option(
      names = "--tower",
      defaultValue = "transformer",
      description =
          "transformer (default: the pretrained MiniLM, fine-tuned) or bag (trained from scratch).")
  String tower;

  @Option(
      names = "--epochs",
      description = "Passes over the training pairs (default 2; transformer 1).")
  Integer epochs;

  @Option(names = "--max-steps", description = "Stop after N steps (default: when the epochs end).")
  Integer maxSteps;

  @Option(
      names = "--max-targets",
      description =
          "Train and evaluate on at most N targets: those of the evaluation queries first, then"
              + " those training pairs name (default: all; transformer 6000; 0: all).")
  Integer maxTargets;

  @Option(
      names = "--eval-limit",
      description = "Evaluate on at most N dev queries (default: all; transformer 1000; 0: all).")
  Integer evalLimit;

  @Mixin LocalRunOptions run;

  @Mixin JsonOutput json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    boolean transformer = tower.equals("transformer");
    if (!transformer && !tower.equals("bag")) {
      throw new ParameterException(spec.commandLine(), "--tower is transformer or bag");
    }
    int epochs = orDefault(this.epochs, transformer ? 1 : 2);
    if (epochs < 1) {
      throw new ParameterException(spec.commandLine(), "--epochs must be at least 1");
    }
    TrainingJobConfig config =
        run.config(demoDefaults(transformer ? transformerDemo() : List.of()));
    Corpus corpus =
        run.corpus(spec.commandLine())
            .subset(
                orDefault(maxTargets, transformer ? 6_000 : 0),
                orDefault(evalLimit, transformer ? 1_000 : 0),
                config.job.seed);
    Path work = run.workDir("dynnibal-demo-");
    try {
      Demo.Result r =
          Demo.run(
              new Demo.Options(
                  corpus, config, epochs, orDefault(maxSteps, 0), 0, work, config.job.seed),
              System.err);
      System.err.println();
      System.err.print(
          MetricsTable.render(
              List.of(
                  new MetricsTable.Row("BM25", r.bm25()),
                  new MetricsTable.Row(transformer ? "zero-shot" : "untrained", r.before()),
                  new MetricsTable.Row(transformer ? "fine-tuned" : "trained", r.after()))));
      TrainingMetrics last = r.last();
      System.err.printf(
          "steps %d, pairs %,d (%.0f pairs/s), re-encode/repair cycles %d, feedback latency %s steps"
              + " / %s ms, dead letters %d, indexing %.0f s, training %.0f s%n",
          r.steps(),
          last.getPairsTrained(),
          r.pairsPerSecond(),
          last.getReencodeCycles(),
          last.getFeedbackLatencySteps(),
          last.getFeedbackLatencyMs() == null ? null : Math.round(last.getFeedbackLatencyMs()),
          r.deadLetters(),
          r.indexSeconds(),
          r.trainSeconds());
      System.err.printf(
          "optimiser: %d of %d steps clipped, %d refused (non-finite), %d loss spikes%s%n",
          last.getStepsClipped(),
          r.steps(),
          last.getStepsRefused(),
          last.getLossSpikes(),
          Boolean.TRUE.equals(last.getDiverged())
              ? "; TRAINING DIVERGED (smoothed loss above twice its lowest)"
              : "");
      Map<String, Object> figures = new LinkedHashMap<>();
      figures.put("steps", r.steps());
      figures.put("pairs_trained", last.getPairsTrained());
      figures.put("train_seconds", Math.round(r.trainSeconds() * 10) / 10.0);
      figures.put("pairs_per_s", Math.round(r.pairsPerSecond() * 10) / 10.0);
      figures.put("index_seconds", Math.round(r.indexSeconds() * 10) / 10.0);
      figures.put("reencode_cycles", last.getReencodeCycles());
      figures.put("feedback_latency_steps", last.getFeedbackLatencySteps());
      figures.put("feedback_latency_ms", last.getFeedbackLatencyMs());
      figures.put("mean_cache_staleness_steps", Math.round(r.meanStaleness() * 10) / 10.0);
      r.meanShardMillis()
          .forEach(
              (s, ms) ->
                  figures.put("shard_" + s + "_mean_sampling_ms", Math.round(ms * 10) / 10.0));
      figures.put("dead_letters", r.deadLetters());
      figures.put("diverged", Boolean.TRUE.equals(last.getDiverged()));
      figures.put("loss_spikes", last.getLossSpikes());
      figures.put("steps_clipped", last.getStepsClipped());
      figures.put("steps_refused", last.getStepsRefused());
      figures.put("reencode_mean_cosine", last.getReencodeMeanCosine());
      figures.put("reencode_min_cosine", last.getReencodeMinCosine());
      figures.put(
          "fidelity", last.getFidelityRunMean().isEmpty() ? null : last.getFidelityRunMean());
      figures.put("checkpoint_bytes", r.checkpointBytes());
      figures.put(
          "checkpoint_bytes_per_million_targets",
          Math.round(r.checkpointBytes() * 1e6 / Math.max(1, corpus.targets().size())));
      figures.put("tower", tower);
      figures.put("targets", corpus.targets().size());
      figures.put("eval_queries", corpus.eval().size());
      put(figures, "bm25_", r.bm25());
      put(figures, "before_", r.before());
      put(figures, "after_", r.after());
      json.writeFile(figures);
      return 0;
    } finally {
      run.cleanUp(work);
    }
  }

  /**
   * The transformer's settings with the demo's time budget: the trainer, which the job waits for,
   * takes both cores' libtorch threads, and a step draws 16 uniform negatives instead of 32.
   */
  private static List<String> transformerDemo() {
    List<String> all = new ArrayList<>(TowerPresets.transformer());
    all.addAll(List.of("trainer.threads=2", "negatives.uniform=16"));
    return all;
  }

  private static int orDefault(Integer given, int otherwise) {
    return given != null ? given : otherwise;
  }

  /** The demo's budget on 2 cores; a user's --config and --set come after and win. */
  public static List<String> demoDefaults(List<String> overrides) {
    List<String> all =
        new ArrayList<>(
            List.of(
                "topic.prefix=demo.",
                "group.id=dynnibal-demo",
                "parallelism=2",
                "shards=2",
                "checkpoint.interval=10s",
                "reencode.every=100",
                "landmarks=64",
                "regression.samples=2048"));
    all.addAll(overrides);
    return all;
  }

  private static void put(Map<String, Object> figures, String prefix, RetrievalMetrics m) {
    m.figures().forEach((k, v) -> figures.put(prefix + k, v));
  }
}
