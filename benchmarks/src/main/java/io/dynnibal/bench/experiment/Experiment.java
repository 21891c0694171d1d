package io.dynnibal.bench.experiment;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.eval.Bm25Baseline;
import io.dynnibal.eval.RetrievalEvaluator;
import io.dynnibal.eval.RetrievalMetrics;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.local.Corpus;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.local.LocalJob;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.features.Features;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.snapshot.ParameterSnapshots;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.flink.core.execution.JobClient;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * Replays one dataset from Kafka through the streaming job once per sampler and seed, with the same
 * budget, and evaluates each trained model exactly: the paper's results table on the user's data.
 *
 * <p>The dataset is published once, to two single-partition topics (one partition: every run reads
 * the pairs in the same order, so runs differ only in sampler and seed). Each run is a fresh job
 * (its own consumer group, model-update, metrics and dead-letter topics, checkpoints and snapshots)
 * that reads both topics from the start; it holds its batches until the targets are indexed, trains
 * {@code steps} steps, keeps its model at a few steps for the learning curve, and stops. Shaped
 * like DJL's examples: {@link #run} takes everything and returns the figures.
 */
public final class Experiment {
  private Experiment() {}

  /**
   * @param bootstrap an existing Kafka cluster, or null for an in-process broker
   * @param curvePoints models kept for the learning curve (evenly spaced; the last is the final
   *     model)
   * @param curveEvalLimit evaluation queries per curve point (0: all); the final model is evaluated
   *     on all
   */
  public record Options(
      Corpus corpus,
      TrainingJobConfig base,
      List<String> samplers,
      int seeds,
      long steps,
      int curvePoints,
      int curveEvalLimit,
      Path workDir,
      String bootstrap) {}

  /**
   * One sampler trained with one seed.
   *
   * @param reencodeCycles model versions every shard had applied by the last step (0 would mean the
   *     shards mined with the untrained model all along)
   * @param diverged whether the trainer's loss watch saw the smoothed loss rise above twice its
   *     lowest
   * @param lossSpikes steps whose loss was more than twice the smoothed loss
   * @param reencodeMeanCosine the last re-encode cycle's held-out cosine of the map's cache to the
   *     exact re-encoding (NaN without a cycle)
   * @param fidelity the hard negatives' fidelity to exact mining averaged over the run (figure name
   *     to value; empty when not measured)
   */
  public record Run(
      String sampler,
      long seed,
      double memPercent,
      RetrievalMetrics metrics,
      long steps,
      double stepsPerSecond,
      double wallSeconds,
      long pairsDeadLettered,
      long reencodeCycles,
      boolean diverged,
      long lossSpikes,
      double reencodeMeanCosine,
      Map<String, Double> fidelity,
      List<RecallPlot.Point> curve) {}

  /**
   * @param bm25 the lexical baseline on the same evaluation queries
   */
  public record Result(
      Map<String, Object> dataset,
      Map<String, String> config,
      List<Run> runs,
      RetrievalMetrics bm25) {}

  public static Result run(Options options, PrintStream out) throws Exception {
    Corpus corpus = options.corpus();
    TrainingJobConfig base = options.base();
    for (String sampler : options.samplers()) {
      TrainingJobConfig probe = base.copy();
      probe.sampler.name = sampler;
      probe.validate();
    }
    Files.createDirectories(options.workDir());
    int stepsPerEpoch = Math.max(1, corpus.train().size() / base.training.batchSize);
    // One pass more than the budget needs: a batch that trains no step (every pair dead-lettered, a
    // non-finite loss) must not leave a run short of max.steps.
    int epochs = (int) Math.ceil(options.steps() / (double) stepsPerEpoch) + 1;
    String dataPrefix =
        base.kafka.topicPrefix
            + "experiment."
            + DatasetTopics.fingerprint(corpus, epochs, base.job.seed)
            + ".";
    List<LabelledQuery> curveQueries = corpus.evalSubset(options.curveEvalLimit(), base.job.seed);
    out.printf(
        "dataset: %s - %,d targets, %,d training pairs (%d passes published for %d steps of %d), %,d eval"
            + " queries (%,d for the curve)%n",
        corpus.name(),
        corpus.targets().size(),
        corpus.train().size(),
        epochs,
        options.steps(),
        base.training.batchSize,
        corpus.eval().size(),
        curveQueries.size());

    List<String> targetIds = new ArrayList<>();
    List<Features> targetFeatures;
    try (DualEncoder featurizer = DualEncoder.create(base.model(), base.job.seed)) {
      for (TargetText t : corpus.targets()) {
        targetIds.add(t.targetId());
      }
      featurizer
          .describeTokenBudgets(
              corpus.targets().stream().map(TargetText::text).toList(),
              corpus.eval().stream().map(LabelledQuery::text).toList())
          .forEach(out::println);
      targetFeatures = RetrievalEvaluator.features(featurizer, corpus.targets());
    }
    Evaluation evaluation = new Evaluation(targetIds, targetFeatures);

    EmbeddedKafkaBroker embedded =
        options.bootstrap() == null
            ? EmbeddedKafkaBroker.start(options.workDir().resolve("kafka"))
            : null;
    try {
      Properties kafka = kafkaProperties(base, embedded, options.bootstrap());
      String targetsTopic = dataPrefix + "targets";
      String pairsTopic = dataPrefix + "pairs";
      DatasetTopics.publishOnce(
          kafka, corpus, targetsTopic, pairsTopic, epochs, base.job.seed, out);

      List<Run> runs = new ArrayList<>();
      RetrievalMetrics untrained = null;
      for (int s = 0; s < options.seeds(); s++) {
        long seed = base.job.seed + s;
        try (DualEncoder encoder = DualEncoder.create(base.model(), seed)) {
          if (untrained == null || encoder.initialisationUsesSeed()) {
            out.printf(
                "evaluating the untrained encoder (seed %d) over %,d targets...%n",
                seed, evaluation.size());
            untrained = evaluation.on(encoder, curveQueries);
            out.printf("untrained: R@1 %.3f%n", untrained.recallAt(1));
          }
        }
        for (String sampler : options.samplers()) {
          TrainingJobConfig config = base.copy();
          config.kafka.bootstrapServers = (String) kafka.get("bootstrap.servers");
          config.sampler.name = sampler;
          config.job.seed = seed;
          config.kafka.topicTargets = targetsTopic;
          config.kafka.topicPairs = pairsTopic;
          String runName = sampler + ".s" + seed;
          config.kafka.topicPrefix =
              dataPrefix + runName + "." + UUID.randomUUID().toString().substring(0, 6) + ".";
          config.kafka.groupId = "dynnibal-experiment-" + runName + "-" + UUID.randomUUID();
          Path runDir = options.workDir().resolve("runs").resolve(runName);
          io.dynnibal.snapshot.Directories.deleteRecursively(
              runDir); // a rerun in the same work dir starts clean
          Files.createDirectories(runDir);
          config.job.checkpointDir = runDir.resolve("checkpoints").toUri().toString();
          config.job.snapshotDir = runDir.resolve("snapshots").toString();
          config.job.maxSteps = options.steps();
          config.training.decaySteps = (int) options.steps();
          config.job.keepModelEvery =
              (int) Math.max(1, options.steps() / Math.max(1, options.curvePoints()));
          runs.add(runOne(config, kafka, evaluation, corpus.eval(), curveQueries, untrained, out));
        }
      }
      Map<String, Object> dataset = new LinkedHashMap<>();
      dataset.put("name", corpus.name());
      dataset.put("targets", corpus.targets().size());
      dataset.put("train_pairs", corpus.train().size());
      dataset.put("eval_queries", corpus.eval().size());
      dataset.put("curve_eval_queries", curveQueries.size());
      dataset.put("targets_topic", targetsTopic);
      dataset.put("pairs_topic", pairsTopic);
      dataset.put("epochs_published", epochs);
      TrainingJobConfig shown = base.copy();
      shown.job.maxSteps = options.steps();
      shown.training.decaySteps = (int) options.steps();
      Map<String, String> config = new LinkedHashMap<>(shown.toProperties());
      config.remove("sampler");
      config.remove("seed");
      config.put("seeds", String.valueOf(options.seeds()));
      config.put("first.seed", String.valueOf(base.job.seed));
      return new Result(
          dataset, config, runs, Bm25Baseline.evaluate(corpus.targets(), corpus.eval()));
    } finally {
      if (embedded != null) {
        embedded.close();
      }
    }
  }

  private static Run runOne(
      TrainingJobConfig config,
      Properties kafka,
      Evaluation evaluation,
      List<LabelledQuery> evalQueries,
      List<LabelledQuery> curveQueries,
      RetrievalMetrics untrained,
      PrintStream out)
      throws Exception {
    String label = config.sampler.name + " s" + config.job.seed;
    try (Admin admin = Admin.create(kafka)) {
      List<NewTopic> own = new ArrayList<>();
      for (NewTopic t : JobTopics.all(config, 1, DatasetTopics.replication(admin))) {
        if (!t.name().equals(config.targetsTopic()) && !t.name().equals(config.pairsTopic())) {
          own.add(t);
        }
      }
      admin.createTopics(own).all().get();
    }
    long start = System.nanoTime();
    JobClient job = LocalJob.start(config, "dynnibal experiment " + label);
    TrainingMetrics last;
    URI model;
    try {
      out.printf(
          "%s: indexing %,d targets, then %,d steps...%n",
          label, evaluation.size(), config.job.maxSteps);
      last = LocalJob.follow(kafka, config, job, config.job.maxSteps, label, out).last();
      model = LocalJob.awaitFinalModel(config, config.job.maxSteps, job);
    } finally {
      LocalJob.stop(job);
    }
    double wall = (System.nanoTime() - start) / 1e9;
    out.printf("%s: evaluating its models over %,d targets...%n", label, evaluation.size());
    List<RecallPlot.Point> curve = new ArrayList<>();
    curve.add(new RecallPlot.Point(0, untrained.recallAt(1)));
    for (long step = config.job.keepModelEvery;
        step < config.job.maxSteps;
        step += config.job.keepModelEvery) {
      var kept = LocalJob.model(Path.of(config.job.snapshotDir), "kept", step);
      if (kept.isPresent()) {
        try (DualEncoder encoder = ParameterSnapshots.readEncoder(kept.get())) {
          curve.add(new RecallPlot.Point(step, evaluation.on(encoder, curveQueries).recallAt(1)));
        }
      }
    }
    RetrievalMetrics metrics;
    try (DualEncoder encoder = ParameterSnapshots.readEncoder(model)) {
      List<RetrievalMetrics> finals =
          evaluation.onEach(encoder, List.of(evalQueries, curveQueries));
      metrics = finals.get(0);
      curve.add(new RecallPlot.Point(config.job.maxSteps, finals.get(1).recallAt(1)));
    }
    Long miningBytes = last.getNegativeMiningBytes();
    Long allBytes = last.getFullDimensionBytes();
    double mem =
        miningBytes == null || allBytes == null || allBytes == 0
            ? Double.NaN
            : 100.0 * miningBytes / allBytes;
    out.printf(
        "%s: R@1 %.3f  R@10 %.3f  R@100 %.3f  Mem %.2f%%  %.1f steps/s  %.0f s  re-encodes %d%s%s%n",
        label,
        metrics.recallAt(1),
        metrics.recallAt(10),
        metrics.recallAt(100),
        mem,
        last.getStepsPerSecond(),
        wall,
        last.getReencodeCycles(),
        fidelityLine(last.getFidelityRunMean()),
        Boolean.TRUE.equals(last.getDiverged()) ? "  DIVERGED" : "");
    return new Run(
        config.sampler.name,
        config.job.seed,
        mem,
        metrics,
        last.getStep(),
        last.getStepsPerSecond(),
        wall,
        last.getPairsDeadLettered(),
        last.getReencodeCycles(),
        Boolean.TRUE.equals(last.getDiverged()),
        last.getLossSpikes(),
        last.getReencodeMeanCosine() == null ? Double.NaN : last.getReencodeMeanCosine(),
        Map.copyOf(last.getFidelityRunMean()),
        curve);
  }

  /** " fidelity overlap .41 logit .97 mass .88 normaliser -0.72", or nothing when not measured. */
  static String fidelityLine(Map<String, Double> mean) {
    if (mean.isEmpty()) {
      return "";
    }
    String line =
        String.format(
            "  fidelity overlap %.2f logit %.2f mass %.2f",
            mean.getOrDefault("overlap_topk", Double.NaN),
            mean.getOrDefault("logit_ratio", Double.NaN),
            mean.getOrDefault("mass_ratio", Double.NaN));
    return mean.containsKey("normaliser_error")
        ? line + String.format(" normaliser %+.2f", mean.get("normaliser_error"))
        : line;
  }

  /**
   * Exact evaluation against every target, featurized once for all the runs' models and encoded
   * once per model for all its query sets.
   */
  private record Evaluation(List<String> targetIds, List<Features> targetFeatures) {
    int size() {
      return targetIds.size();
    }

    RetrievalMetrics on(DualEncoder encoder, List<LabelledQuery> queries) {
      return onEach(encoder, List.of(queries)).get(0);
    }

    List<RetrievalMetrics> onEach(DualEncoder encoder, List<List<LabelledQuery>> querySets) {
      long start = System.nanoTime();
      float[][] targets = RetrievalEvaluator.encodeTargets(encoder, targetFeatures);
      List<RetrievalMetrics> out = new ArrayList<>();
      for (List<LabelledQuery> queries : querySets) {
        out.add(RetrievalEvaluator.evaluate(encoder, targetIds, targets, queries, start));
      }
      return out;
    }
  }

  private static Properties kafkaProperties(
      TrainingJobConfig base, EmbeddedKafkaBroker embedded, String bootstrap) {
    TrainingJobConfig c = base.copy();
    c.kafka.bootstrapServers = embedded != null ? embedded.bootstrapServers() : bootstrap;
    return c.clientProperties();
  }
}
