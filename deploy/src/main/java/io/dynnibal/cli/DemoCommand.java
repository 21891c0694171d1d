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
      "Train with DyNNIBAL-MH negatives on the bundled Debian packages corpus, end to end on this machine.",
      "An in-process Kafka broker and a Flink MiniCluster (parallelism 2, RocksDB state, checkpoints), a progress bar,",
      "and a table of dev recall before and after training; --json FILE also writes the figures as JSON.",
      "About 3.5 minutes on 2 cores with the defaults."
    })
public final class DemoCommand implements Callable<Integer> {
  @Option(
      names = "--epochs",
      defaultValue = "2",
      description = "Passes over the training pairs (default ${DEFAULT-VALUE}).")
  int epochs;

  @Option(
      names = "--eval-limit",
      defaultValue = "0",
      description = "Evaluate on at most N dev queries (0: all).")
  int evalLimit;

  @Mixin LocalRunOptions run;

  @Mixin JsonOutput json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (epochs < 1) {
      throw new ParameterException(spec.commandLine(), "--epochs must be at least 1");
    }
    Corpus corpus = run.corpus(spec.commandLine());
    TrainingJobConfig config = run.config(demoDefaults(List.of()));
    Path work = run.workDir("dynnibal-demo-");
    try {
      Demo.Result r =
          Demo.run(
              new Demo.Options(corpus, config, epochs, evalLimit, work, config.job.seed),
              System.err);
      System.err.println();
      System.err.print(
          MetricsTable.render(
              List.of(
                  new MetricsTable.Row("before", r.before()),
                  new MetricsTable.Row("after", r.after()))));
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
      put(figures, "before_", r.before());
      put(figures, "after_", r.after());
      json.writeFile(figures);
      return 0;
    } finally {
      run.cleanUp(work);
    }
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
