package io.dynnibal.local;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.OperatorSettings;
import io.dynnibal.jobs.training.TrainingJob;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.features.Features;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.training.DualEncoderTrainer;
import io.dynnibal.training.TrainingBatch;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.flink.core.execution.JobClient;

/**
 * {@code ./dynnibal bench pipeline}: how close the streaming job comes to the speed of its own
 * trainer. One run measures both on the same pairs, batch size and negative dose:
 *
 * <ol>
 *   <li>the full job (in-process broker, MiniCluster, RocksDB shards, merge, trainer), timed over
 *       the steps after a warm-up, from the trainer's own reports: steps/s, the share of the time
 *       the trainer waited for a merged batch, the shards' and the merge's time per batch, and the
 *       feedback latency of the model updates that landed in the window;
 *   <li>the trainer alone (a {@link DualEncoderTrainer} in this JVM, nothing else running): the
 *       same pairs in the order they were published, each batch with as many negatives as the job's
 *       steps trained against on average, drawn uniformly (a step costs the same whichever targets
 *       they are), target features computed once as the shards would hold them.
 * </ol>
 *
 * <p>The ratio of the two is what the pipeline costs: 1 means mining, merging and model updates
 * never keep the trainer waiting. Both share the machine's cores with nothing else of ours; in the
 * job the shards and the trainer share them with each other (the figures say how many).
 */
public final class PipelineBenchmark {
  private PipelineBenchmark() {}

  /**
   * @param warmupSteps steps before the timed window (indexing, the first model updates, JIT)
   * @param steps timed steps
   */
  public record Options(
      Corpus corpus, TrainingJobConfig job, int warmupSteps, int steps, Path workDir, long seed) {}

  public static Map<String, Object> run(Options options, PrintStream out) throws Exception {
    TrainingJobConfig config = options.job();
    Corpus corpus = options.corpus();
    long planned = (long) options.warmupSteps() + options.steps();
    Path work = Files.createDirectories(options.workDir());
    LocalJob.prepareRun(config, work, planned);
    int passes = (int) Math.ceil((double) planned * config.batchSize / corpus.train().size()) + 1;
    List<LabelledQuery> published = new ArrayList<>();
    Random random = new Random(options.seed());
    for (int p = 0; p < passes; p++) {
      List<LabelledQuery> shuffled = new ArrayList<>(corpus.train());
      Collections.shuffle(shuffled, random);
      published.addAll(shuffled);
    }

    Timed timed = pipeline(config, corpus, published, passes, options, work, out);
    Window window = timed.window();
    int negatives = (int) Math.round(window.negativesPerStep());
    out.printf(
        "the trainer alone: %d steps of %d with %d negatives...%n",
        planned, config.batchSize, negatives);
    Alone alone = trainerAlone(config, corpus.targets(), published, negatives, options, random);
    double trainerStepsPerSecond = alone.stepsPerSecond();

    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("corpus", corpus.name());
    figures.put("targets", corpus.targets().size());
    figures.put("sampler", config.sampler);
    figures.put("tower", config.model().towerKind().id);
    figures.put("batch", config.batchSize);
    figures.put("negatives_per_example", config.negativesPerExample);
    figures.put("negatives_uniform", config.negativesUniform);
    figures.put("negatives_per_step", round(window.negativesPerStep()));
    // Each probe scores every target at full dimension, and each model version re-encodes the
    // shard at full dimension for it: a measurement's cost, part of the shards' time here.
    figures.put("fidelity_probes", config.fidelityProbes);
    figures.put("reencode_every", config.reencodeEvery);
    // What bounds the feedback latency in steps: batches the shards may mine ahead of the trainer.
    figures.put("mining_lead", config.miningLead);
    figures.put("reencode_exact_per_batch", config.reencodeExactPerBatch());
    figures.put("warmup_steps", options.warmupSteps());
    figures.put("steps_timed", window.steps());
    figures.put("cores", Runtime.getRuntime().availableProcessors());
    figures.put("collector", GarbageCollectors.names());
    figures.put("parallelism", config.parallelism);
    figures.put(
        "cores_split",
        config.parallelism
            + " shard subtasks, the merge and the trainer share "
            + Runtime.getRuntime().availableProcessors()
            + " cores (no pinning); DJL runs one intra-op thread per operator");
    figures.put("trainer_steps_per_s", round(trainerStepsPerSecond));
    figures.put("pipeline_steps_per_s", round(window.stepsPerSecond()));
    figures.put("ratio", round(window.stepsPerSecond() / trainerStepsPerSecond));
    figures.put("trainer_idle_fraction", round(window.trainerIdleFraction()));
    figures.put("shard_ms_per_batch", round(window.shardMillis()));
    figures.put("shard_ms_per_batch_slowest", round(window.slowestShardMillis()));
    figures.put("merge_ms_per_batch", round(window.mergeMillis()));
    figures.put("model_updates_landed", window.updatesLanded());
    figures.put("feedback_latency_ms", round(window.feedbackMillis()));
    figures.put("feedback_latency_steps", round(window.feedbackSteps()));
    // Each update apart: an exact re-encode cycle (new landmarks, or a map below
    // reencode.exact.below) takes seconds where a map takes about one, and the mean hides which.
    figures.put("feedback_latency_ms_each", window.feedbackMillisEach());
    figures.put("feedback_latency_steps_each", window.feedbackStepsEach());
    // How the cores were shared: CPU per step of each operator over the timed window (cores used
    // x 1000 / steps per second), and of the trainer alone. The job cannot run faster than the
    // cores divided by its CPU per step, whatever the scheduling: the ratio at that bound says
    // whether the work or the waiting holds it back.
    CpuAccount.Split cpu = timed.cpu();
    if (cpu != null) {
      Map<String, Double> perStep = cpuMillisPerStep(cpu, window.stepsPerSecond());
      double totalPerStep = perStep.get("total");
      int cores = Runtime.getRuntime().availableProcessors();
      figures.put("cpu_cores_busy", round(cpu.processCores()));
      figures.put("cpu_ms_per_step", perStep);
      putOtherMillisPerStep(figures, cpu, window.stepsPerSecond());
      // Part of "other": what the JIT compilers still spend in the window says whether the
      // warm-up was long enough for the code to settle.
      figures.put(
          "jit_ms_per_step", round(millisPerStep(cpu.compileCores(), window.stepsPerSecond())));
      figures.put("trainer_alone_cpu_ms_per_step", round(alone.cpuMillisPerStep()));
      figures.put(
          "ratio_if_every_core_busy", round(cores * 1000 / totalPerStep / trainerStepsPerSecond));
    }
    return figures;
  }

  /**
   * What the trainer reported over the timed steps (after the warm-up). Means are over the window's
   * reports; the feedback latency over the model updates that reached every shard in it (NaN when
   * none did), and each of theirs in the order they landed.
   */
  record Window(
      long steps,
      double stepsPerSecond,
      double trainerIdleFraction,
      double shardMillis,
      double slowestShardMillis,
      double mergeMillis,
      double negativesPerStep,
      int updatesLanded,
      double feedbackMillis,
      double feedbackSteps,
      List<Double> feedbackMillisEach,
      List<Long> feedbackStepsEach,
      long fromMillis,
      long toMillis) {

    /** The window from the first report at or after {@code fromStep} to the last report. */
    static Window of(List<TrainingMetrics> reports, long fromStep) {
      TrainingMetrics start = null;
      double shard = 0;
      double slowest = 0;
      double merge = 0;
      double negatives = 0;
      int n = 0;
      int landed = 0;
      List<Double> feedbackMs = new ArrayList<>();
      List<Long> feedbackSteps = new ArrayList<>();
      long cycles = -1;
      TrainingMetrics end = null;
      for (TrainingMetrics m : reports) {
        if (start == null) {
          if (m.getStep() >= fromStep) {
            start = m;
            cycles = m.getReencodeCycles();
          }
          continue;
        }
        end = m;
        n++;
        double sum = 0;
        double max = 0;
        for (double ms : m.getShardSamplingLatencyMs().values()) {
          sum += ms;
          max = Math.max(max, ms);
        }
        shard +=
            m.getShardSamplingLatencyMs().isEmpty()
                ? 0
                : sum / m.getShardSamplingLatencyMs().size();
        slowest += max;
        merge += m.getMergeMs() == null ? 0 : m.getMergeMs();
        negatives += m.getNegativesPerStep() == null ? 0 : m.getNegativesPerStep();
        if (m.getReencodeCycles() > cycles && m.getFeedbackLatencyMs() != null) {
          landed++;
          feedbackMs.add(m.getFeedbackLatencyMs());
          feedbackSteps.add(m.getFeedbackLatencySteps());
        }
        cycles = m.getReencodeCycles();
      }
      if (end == null) {
        throw new IllegalStateException(
            "no step reported after step " + fromStep + ": nothing to time");
      }
      double seconds = (end.getTimeMs() - start.getTimeMs()) / 1000.0;
      double busy = end.getTrainerBusyMs() - start.getTrainerBusyMs();
      return new Window(
          end.getStep() - start.getStep(),
          (end.getStep() - start.getStep()) / seconds,
          Math.max(0, 1 - busy / 1000.0 / seconds),
          shard / n,
          slowest / n,
          merge / n,
          negatives / n,
          landed,
          feedbackMs.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN),
          feedbackSteps.stream().mapToDouble(Long::doubleValue).average().orElse(Double.NaN),
          List.copyOf(feedbackMs),
          List.copyOf(feedbackSteps),
          start.getTimeMs(),
          end.getTimeMs());
    }
  }

  /**
   * CPU a step of each operator over a window ({@link #OPERATORS}, the rest as {@code other}) and
   * their {@code total}, in milliseconds: cores used x 1000 / steps a second.
   */
  static Map<String, Double> cpuMillisPerStep(CpuAccount.Split cpu, double stepsPerSecond) {
    Map<String, Double> perStep = new LinkedHashMap<>();
    double total = 0;
    for (Map.Entry<String, Double> g : cpu.groupCores().entrySet()) {
      double ms = millisPerStep(g.getValue(), stepsPerSecond);
      perStep.put(g.getKey(), round(ms));
      total += ms;
    }
    perStep.put("total", round(total));
    return perStep;
  }

  /**
   * {@code other_cpu_ms_per_step}: the part of {@code other} the JIT compilers, the collector and
   * RocksDB's threads used a step, where they can be read (Linux); nothing where they cannot.
   */
  static void putOtherMillisPerStep(
      Map<String, Object> figures, CpuAccount.Split cpu, double stepsPerSecond) {
    if (cpu.nativeCores().isEmpty()) {
      return;
    }
    Map<String, Double> perStep = new LinkedHashMap<>();
    for (Map.Entry<String, Double> kind : cpu.nativeCores().entrySet()) {
      perStep.put(kind.getKey(), round(millisPerStep(kind.getValue(), stepsPerSecond)));
    }
    figures.put("other_cpu_ms_per_step", perStep);
  }

  /** Cores busy over a window as milliseconds of CPU a step. */
  private static double millisPerStep(double cores, double stepsPerSecond) {
    return cores * 1000 / stepsPerSecond;
  }

  /** The job's timed window and how its process's CPU was shared meanwhile (null: unmeasured). */
  private record Timed(Window window, CpuAccount.Split cpu) {}

  /** The thread groups of the job's operators, by what the figures call them. */
  static final Map<String, List<String>> OPERATORS =
      Map.of(
          "shards", List.of("shard-index"),
          "trainer", List.of("trainer"),
          "merge", List.of("negative-merge"));

  private static Timed pipeline(
      TrainingJobConfig config,
      Corpus corpus,
      List<LabelledQuery> published,
      int passes,
      Options options,
      Path work,
      PrintStream out)
      throws Exception {
    List<TrainingMetrics> reports = new ArrayList<>();
    CpuAccount cpu = CpuAccount.start(250);
    try (cpu;
        EmbeddedKafkaBroker kafka = EmbeddedKafkaBroker.start(work.resolve("kafka"))) {
      config.bootstrapServers = kafka.bootstrapServers();
      kafka.createTopics(TrainingJob.topics(config, 2, (short) 1));
      JobClient job;
      try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties())) {
        out.printf(
            "the full job: %,d targets, %d + %d steps of %d (Flink MiniCluster, parallelism %d,"
                + " RocksDB state)...%n",
            corpus.targets().size(),
            options.warmupSteps(),
            options.steps(),
            config.batchSize,
            config.parallelism);
        publisher.publishTargets(config.targetsTopic(), corpus.targets(), null);
        job = LocalJob.start(config, "dynnibal bench pipeline");
        LocalJob.awaitTargetsRead(kafka.clientProperties(), config, job, () -> {});
        int perPass = published.size() / passes;
        for (int p = 0; p < passes; p++) {
          publisher.publishPairs(
              config.pairsTopic(),
              published.subList(p * perPass, (p + 1) * perPass),
              "e" + p,
              System.currentTimeMillis(),
              null);
        }
      }
      try {
        LocalJob.follow(
            kafka.clientProperties(), config, job, config.maxSteps, "pipeline", out, reports::add);
      } finally {
        LocalJob.stop(job);
      }
    }
    reports.sort(java.util.Comparator.comparingLong(TrainingMetrics::getStep));
    Window window = Window.of(reports, options.warmupSteps());
    return new Timed(
        window,
        cpu == null ? null : cpu.between(window.fromMillis(), window.toMillis(), OPERATORS));
  }

  /** The trainer alone: its steps/s and the CPU a step took on its thread (NaN: unmeasured). */
  record Alone(double stepsPerSecond, double cpuMillisPerStep) {}

  /**
   * Steps/s of a trainer with the job's model and optimiser settings on the pairs in published
   * order, batches of the job's size with {@code negatives} uniform negatives each, timed after the
   * same warm-up. Timed: featurizing the queries (the job's trainer does it too) and the step.
   */
  static Alone trainerAlone(
      TrainingJobConfig config,
      List<TargetText> targets,
      List<LabelledQuery> pairs,
      int negatives,
      Options options,
      Random random) {
    Map<String, Integer> index = new HashMap<>();
    for (int i = 0; i < targets.size(); i++) {
      index.put(targets.get(i).targetId(), i);
    }
    try (DualEncoder encoder = DualEncoder.create(config.model(), config.seed)) {
      DualEncoderTrainer trainer =
          new DualEncoderTrainer(encoder, OperatorSettings.trainer(config).trainerConfig());
      // Target features as the shards hold them: computed once, outside the timing.
      Features[] features = new Features[targets.size()];
      int next = 0;
      long timedNanos = 0;
      long timedCpuNanos = 0;
      ThreadMXBean threads = ManagementFactory.getThreadMXBean();
      boolean cpuMeasured = threads.isCurrentThreadCpuTimeSupported();
      long total = (long) options.warmupSteps() + options.steps();
      for (long s = 0; s < total; s++) {
        List<String> queryTexts = new ArrayList<>();
        List<String> positiveIds = new ArrayList<>();
        List<Features> positives = new ArrayList<>();
        List<String> negativeIds = new ArrayList<>();
        List<Features> negativeFeatures = new ArrayList<>();
        while (queryTexts.size() < config.batchSize) {
          LabelledQuery q = pairs.get(next++ % pairs.size());
          Integer t = index.get(q.targetId());
          if (t != null) {
            queryTexts.add(q.text());
            positiveIds.add(q.targetId());
            positives.add(featuresOf(encoder, targets, features, t));
          }
        }
        for (int i = 0; i < negatives; i++) {
          int t = random.nextInt(targets.size());
          negativeIds.add(targets.get(t).targetId());
          negativeFeatures.add(featuresOf(encoder, targets, features, t));
        }
        // Timed: what the job's trainer does with a merged batch. Not timed: looking up and
        // featurizing the targets, which the shards deliver featurized.
        long batchStart = System.nanoTime();
        long cpuStart = cpuMeasured ? threads.getCurrentThreadCpuTime() : 0;
        List<Features> queries = new ArrayList<>(queryTexts.size());
        for (String text : queryTexts) {
          queries.add(encoder.featurizeQuery(text));
        }
        trainer.step(
            new TrainingBatch(queries, positiveIds, positives, negativeIds, negativeFeatures));
        if (s >= options.warmupSteps()) {
          timedNanos += System.nanoTime() - batchStart;
          timedCpuNanos += cpuMeasured ? threads.getCurrentThreadCpuTime() - cpuStart : 0;
        }
      }
      return new Alone(
          options.steps() / (timedNanos / 1e9),
          cpuMeasured ? timedCpuNanos / 1e6 / options.steps() : Double.NaN);
    }
  }

  private static Features featuresOf(
      DualEncoder encoder, List<TargetText> targets, Features[] cache, int t) {
    if (cache[t] == null) {
      cache[t] = encoder.featurizeTarget(targets.get(t).text());
    }
    return cache[t];
  }

  /** Three decimals; null (not measured) for NaN. */
  private static Double round(double v) {
    return Double.isNaN(v) ? null : Math.round(v * 1000) / 1000.0;
  }
}
