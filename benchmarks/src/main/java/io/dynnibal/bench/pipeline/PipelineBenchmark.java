package io.dynnibal.bench.pipeline;

import static io.dynnibal.bench.cpu.CpuPerStep.round;

import io.dynnibal.bench.cpu.CpuAccount;
import io.dynnibal.bench.cpu.CpuPerStep;
import io.dynnibal.data.LabelledQuery;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.local.Corpus;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.local.LocalJob;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.training.DualEncoderTrainer;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
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
    int passes =
        (int) Math.ceil((double) planned * config.training.batchSize / corpus.train().size()) + 1;
    List<LabelledQuery> published = new ArrayList<>();
    Random random = new Random(options.seed());
    for (int p = 0; p < passes; p++) {
      List<LabelledQuery> shuffled = new ArrayList<>(corpus.train());
      Collections.shuffle(shuffled, random);
      published.addAll(shuffled);
    }

    Timed timed = pipeline(config, corpus, published, passes, options, work, out);
    StepWindow window = timed.window();
    int negatives = (int) Math.round(window.negativesPerStep());
    out.printf(
        "the trainer alone: %d steps of %d with %d negatives...%n",
        planned, config.training.batchSize, negatives);
    TrainerAlone.Result alone =
        TrainerAlone.run(
            config,
            corpus.targets(),
            published,
            negatives,
            options.warmupSteps(),
            options.steps(),
            random);
    double trainerStepsPerSecond = alone.stepsPerSecond();

    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("corpus", corpus.name());
    figures.put("targets", corpus.targets().size());
    figures.put("sampler", config.sampler.name);
    figures.put("tower", config.model().towerKind().id);
    figures.put("batch", config.training.batchSize);
    figures.put("negatives_per_example", config.negatives.negativesPerExample);
    figures.put("negatives_uniform", config.negatives.negativesUniform);
    figures.put("negatives_per_step", round(window.negativesPerStep()));
    // Each probe scores every target at full dimension, and each model version re-encodes the
    // shard at full dimension for it: a measurement's cost, part of the shards' time here.
    figures.put("fidelity_probes", config.negatives.fidelityProbes);
    figures.put("reencode_every", config.reencode.reencodeEvery);
    // What bounds the feedback latency in steps: batches the shards may mine ahead of the trainer.
    figures.put("mining_lead", config.job.miningLead);
    figures.put("reencode_exact_per_batch", config.reencodeExactPerBatch());
    figures.put("warmup_steps", options.warmupSteps());
    figures.put("steps_timed", window.steps());
    figures.put("cores", Runtime.getRuntime().availableProcessors());
    figures.put("collector", GarbageCollectors.names());
    figures.put("parallelism", config.job.parallelism);
    figures.put(
        "cores_split",
        config.job.parallelism
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
      Map<String, Double> perStep = CpuPerStep.cpuMillisPerStep(cpu, window.stepsPerSecond());
      double totalPerStep = perStep.get("total");
      int cores = Runtime.getRuntime().availableProcessors();
      figures.put("cpu_cores_busy", round(cpu.processCores()));
      figures.put("cpu_ms_per_step", perStep);
      CpuPerStep.putOtherMillisPerStep(figures, cpu, window.stepsPerSecond());
      // Part of "other": what the JIT compilers still spend in the window says whether the
      // warm-up was long enough for the code to settle.
      figures.put(
          "jit_ms_per_step",
          round(CpuPerStep.millisPerStep(cpu.compileCores(), window.stepsPerSecond())));
      figures.put("trainer_alone_cpu_ms_per_step", round(alone.cpuMillisPerStep()));
      figures.put(
          "ratio_if_every_core_busy", round(cores * 1000 / totalPerStep / trainerStepsPerSecond));
    }
    return figures;
  }

  /** The job's timed window and how its process's CPU was shared meanwhile (null: unmeasured). */
  private record Timed(StepWindow window, CpuAccount.Split cpu) {}

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
      config.kafka.bootstrapServers = kafka.bootstrapServers();
      kafka.createTopics(JobTopics.all(config, 2, (short) 1));
      JobClient job;
      try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties())) {
        out.printf(
            "the full job: %,d targets, %d + %d steps of %d (Flink MiniCluster, parallelism %d,"
                + " RocksDB state)...%n",
            corpus.targets().size(),
            options.warmupSteps(),
            options.steps(),
            config.training.batchSize,
            config.job.parallelism);
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
            kafka.clientProperties(),
            config,
            job,
            config.job.maxSteps,
            "pipeline",
            out,
            reports::add);
      } finally {
        LocalJob.stop(job);
      }
    }
    reports.sort(java.util.Comparator.comparingLong(TrainingMetrics::getStep));
    StepWindow window = StepWindow.of(reports, options.warmupSteps());
    return new Timed(
        window,
        cpu == null
            ? null
            : cpu.between(window.fromMillis(), window.toMillis(), CpuPerStep.OPERATORS));
  }
}
