package io.dynnibal.bench.scale;

import static io.dynnibal.bench.cpu.CpuPerStep.round;

import io.dynnibal.bench.cpu.CpuAccount;
import io.dynnibal.bench.cpu.CpuPerStep;
import io.dynnibal.bench.pipeline.GarbageCollectors;
import io.dynnibal.bench.pipeline.StepWindow;
import io.dynnibal.bench.state.ShardHeapBenchmark;
import io.dynnibal.data.TargetText;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.local.Corpus;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.local.LocalJob;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.stream.JobMetrics;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;

/**
 * {@code ./dynnibal bench scale --targets N}: N synthetic targets (texts shaped like the bundled
 * Debian corpus's, {@link SyntheticCorpus}) through the real job on this machine (in-process
 * broker, MiniCluster, RocksDB), and what they cost:
 *
 * <ol>
 *   <li>indexing: from the first target published to every target in a shard's tree ({@code
 *       index_targets_per_s});
 *   <li>memory: the JVM's heap after a full collection, before the targets and once they are
 *       indexed ({@code heap_bytes_per_target}: the SG trees, their vectors and id maps; the job
 *       itself, the shards' models included, is in the baseline, taken once a first slice of
 *       {@value #FIRST_SLICE} targets is indexed); the RocksDB files of the keyed state in a
 *       checkpoint ({@code state_bytes_per_target});
 *   <li>training: steps/s over the steps after a warm-up, as {@code bench pipeline} times them;
 *   <li>a restore: from cancelling the job after a checkpoint, through starting it again from that
 *       checkpoint, to every shard's tree rebuilt from its state ({@code restore_seconds}); the
 *       slowest shard's time rebuilding its SG trees from state ({@code tree_rebuild_seconds}), and
 *       how many of the trees came back from the shapes saved with the checkpoint ({@code
 *       trees_from_shape}) rather than a bulk build; the checkpoint's size on disk.
 * </ol>
 *
 * The job's own gauges (targets indexed, tree build time, the trainer's step) are read in process
 * ({@link InProcessMetrics}), not from logs.
 */
public final class ScaleBenchmark {
  private ScaleBenchmark() {}

  private static final Duration INDEXING_STALLED = Duration.ofMinutes(10);

  /** Targets indexed before the heap's baseline: enough that every shard key has one. */
  static final int FIRST_SLICE = 2_000;

  public record Options(
      int targets, TrainingJobConfig job, int warmupSteps, int steps, Path workDir, long seed) {}

  public static Map<String, Object> run(Options options, PrintStream out) throws Exception {
    TrainingJobConfig config = options.job();
    int n = options.targets();
    if (config.negativesPool() != io.dynnibal.negatives.NegativesPool.ALL) {
      // It measures an index of every target; under positives nothing is indexed before pairs.
      throw new IllegalArgumentException(
          "bench scale measures an index of every target: negatives.pool must be all, got "
              + config.negatives.negativesPool);
    }
    long planned = (long) options.warmupSteps() + options.steps();
    Path work = Files.createDirectories(options.workDir());
    LocalJob.prepareRun(config, work, planned);
    SyntheticCorpus corpus =
        SyntheticCorpus.shapedLike(Corpus.bundledDebian().targets(), options.seed());
    int pairCount = (int) ((planned + 10) * config.training.batchSize * 5 / 4);

    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("targets", n);
    figures.put("text_shape", "Debian package descriptions (bundled corpus), synthetic words");
    figures.put("tower", config.model().towerKind().id);
    figures.put("sampler", config.sampler.name);
    figures.put("landmarks", config.index.landmarks);
    figures.put("parallelism", config.job.parallelism);
    figures.put("cores", Runtime.getRuntime().availableProcessors());
    figures.put("collector", GarbageCollectors.names());
    figures.put("max_heap_bytes", Runtime.getRuntime().maxMemory());
    CpuAccount cpu = CpuAccount.start(250);
    try (cpu;
        EmbeddedKafkaBroker kafka = EmbeddedKafkaBroker.start(work.resolve("kafka"))) {
      config.kafka.bootstrapServers = kafka.bootstrapServers();
      kafka.createTopics(JobTopics.all(config, 2, (short) 1));
      out.printf(
          "the job: Flink MiniCluster, parallelism %d, RocksDB state; %,d synthetic targets...%n",
          config.job.parallelism, n);
      JobClient job =
          LocalJob.start(
              config,
              "dynnibal bench scale",
              conf -> {
                InProcessMetrics.install(conf);
              });
      List<TrainingMetrics> reports = new ArrayList<>();
      try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties())) {
        awaitShardsOpen(job, config.job.parallelism);
        // A first slice, so that every shard subtask has loaded its model (a key loads it with
        // its first target; 64 MB of hashed-feature table each) before the baseline: the figure
        // per target is what the rest add.
        int first = Math.min(n / 2, FIRST_SLICE);
        List<TargetText> all = corpus.targets(n);
        publish(kafka, config, all.subList(0, first), 0, out);
        awaitIndexed(job, first, out);
        long heapBefore = ShardHeapBenchmark.heapAfterGc();
        long start = System.nanoTime();
        publish(kafka, config, all.subList(first, n), first, out);
        awaitIndexed(job, n, out);
        double indexSeconds = (System.nanoTime() - start) / 1e9;
        long heapIndexed = ShardHeapBenchmark.heapAfterGc();
        figures.put("index_seconds", round(indexSeconds));
        figures.put("index_targets_per_s", round((n - first) / indexSeconds));
        figures.put("heap_bytes_indexed", heapIndexed - heapBefore);
        figures.put(
            "heap_bytes_per_target", round((heapIndexed - heapBefore) / (double) (n - first)));

        publisher.publishPairs(
            config.pairsTopic(),
            corpus.queries(0, pairCount, n),
            "e0",
            System.currentTimeMillis(),
            null);
        LocalJob.follow(kafka.clientProperties(), config, job, planned, "scale", out, reports::add);
        reports.sort(java.util.Comparator.comparingLong(TrainingMetrics::getStep));
        StepWindow window = StepWindow.of(reports, options.warmupSteps());
        figures.put("steps_timed", window.steps());
        figures.put("steps_per_s", round(window.stepsPerSecond()));
        figures.put("shard_ms_per_batch", round(window.shardMillis()));
        // Where the timed steps' CPU went, as bench pipeline reports it: what grows with the index
        // besides the shards' mining (RocksDB's own threads count as "other").
        // (None for a window shorter than the account's samples: the smoke test's.)
        CpuAccount.Split split =
            cpu == null
                ? null
                : cpu.between(window.fromMillis(), window.toMillis(), CpuPerStep.OPERATORS);
        if (split != null) {
          figures.put("cpu_cores_busy", round(split.processCores()));
          figures.put(
              "cpu_ms_per_step", CpuPerStep.cpuMillisPerStep(split, window.stepsPerSecond()));
          CpuPerStep.putOtherMillisPerStep(figures, split, window.stepsPerSecond());
        }

        // A checkpoint after the last step: RocksDB flushed, the trainer at `planned`.
        Path checkpoint = awaitCheckpointAfter(config, job, latestCheckpoint(config, job));
        out.println("restore: cancelling the job, then resuming from its latest checkpoint...");
        long cancel = System.nanoTime();
        LocalJob.stop(job);
        long cancelNanos = System.nanoTime() - cancel;
        // Checkpoints went on after the one awaited (it may be subsumed): the latest retained.
        Path retained = latestCheckpoint(config, job).orElse(checkpoint);
        figures.put("checkpoint_restored", checkpointNumber(retained));
        // Sized once the job has stopped, so no checkpoint is written or subsumed meanwhile. An
        // incremental checkpoint uploads RocksDB's SST files (flushed for it) to shared/: the keyed
        // state, which is the shards' targets (the merge's and the ingest gates' are small beside
        // them). The trainer's parameters are raw operator state, in chk-<n>/.
        long keyed = sizeOf(jobCheckpoints(config, job).resolve("shared"));
        figures.put("state_bytes", keyed);
        figures.put("state_bytes_per_target", round(keyed / (double) n));
        figures.put("checkpoint_bytes", sizeOf(jobCheckpoints(config, job)));
        long restoreStart = System.nanoTime() - cancelNanos; // the sizing is not timed
        InProcessMetrics.clear();
        JobClient restored =
            LocalJob.start(
                config,
                "dynnibal bench scale",
                conf -> {
                  InProcessMetrics.install(conf);
                  conf.set(StateRecoveryOptions.SAVEPOINT_PATH, retained.toString());
                });
        try {
          // A shard rebuilds its tree from state at its first input: the restored job's batches.
          publisher.publishPairs(
              config.pairsTopic(),
              corpus.queries(pairCount, 4 * config.training.batchSize, n),
              "e1",
              System.currentTimeMillis(),
              null);
          // Restored: every shard has its tree back, ready to answer. (Not "the trainer's next
          // step": unaligned checkpoints restore batches in flight, which the trainer steps on
          // before any shard is back.)
          awaitTreesRebuilt(restored, Math.min(config.job.parallelism, config.job.shards));
          figures.put("restore_seconds", round((System.nanoTime() - restoreStart) / 1e9));
          figures.put(
              "tree_rebuild_seconds",
              round(InProcessMetrics.max(shard(JobMetrics.INDEX_BUILD_MILLIS)) / 1000));
          figures.put(
              "trees_from_shape",
              (long) InProcessMetrics.sum(shard(JobMetrics.INDEX_TREES_FROM_SHAPE)));
        } finally {
          try {
            LocalJob.stop(restored);
          } catch (java.util.concurrent.TimeoutException slow) {
            // A shard still building its tree finishes that before it can be cancelled.
            out.println("the restored job is still stopping; the figures are complete");
          }
        }
      }
    }
    return figures;
  }

  private static Predicate<String> shard(String metric) {
    return id -> id.contains(".shard-index.") && id.endsWith("." + metric);
  }

  private static Predicate<String> trainer(String metric) {
    return id -> id.contains(".trainer.") && id.endsWith("." + JobMetrics.GROUP + "." + metric);
  }

  /**
   * Publishes {@code targets}, the {@code before}-th target of the corpus first, on a producer of
   * its own, closed before the heap is measured again: a producer keeps its send buffers (up to 32
   * MB) pooled on the heap.
   */
  private static void publish(
      EmbeddedKafkaBroker kafka,
      TrainingJobConfig config,
      List<TargetText> targets,
      int before,
      PrintStream out) {
    try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties())) {
      publisher.publishTargets(
          config.targetsTopic(),
          targets,
          sent -> {
            if ((before + sent) % 100_000 == 0) {
              out.printf("published %,d targets%n", before + sent);
            }
          });
    }
  }

  /** Until every shard subtask has registered its gauges (its state is open). */
  private static void awaitShardsOpen(JobClient job, int parallelism) throws Exception {
    await(
        job,
        Duration.ofMinutes(5),
        "the job's operators did not open",
        () ->
            InProcessMetrics.count(shard(JobMetrics.INDEX_TARGETS)) >= parallelism
                && InProcessMetrics.count(trainer(JobMetrics.STEP)) >= 1);
  }

  /** Until {@code done}, failing if the job ends or {@code limit} passes. */
  private static void await(
      JobClient job, Duration limit, String failure, java.util.function.BooleanSupplier done)
      throws Exception {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!done.getAsBoolean()) {
      LocalJob.failIfEnded(job);
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(failure + " within " + limit.toMinutes() + " minutes");
      }
      Thread.sleep(50);
    }
  }

  /** Until the shards' trees hold {@code n} targets, printing progress every 10 s. */
  private static void awaitIndexed(JobClient job, int n, PrintStream out) throws Exception {
    double last = 0;
    long lastChange = System.nanoTime();
    long lastPrint = System.nanoTime();
    while (true) {
      LocalJob.failIfEnded(job);
      double indexed = InProcessMetrics.sum(shard(JobMetrics.INDEX_TARGETS));
      if (indexed >= n) {
        return;
      }
      long now = System.nanoTime();
      if (indexed != last) {
        last = indexed;
        lastChange = now;
      } else if (now - lastChange > INDEXING_STALLED.toNanos()) {
        throw new IllegalStateException(
            "indexing stalled at " + (long) indexed + " of " + n + " targets");
      }
      if (now - lastPrint > 10_000_000_000L) {
        out.printf("indexed %,d of %,d targets%n", (long) indexed, n);
        lastPrint = now;
      }
      Thread.sleep(100);
    }
  }

  private static void awaitTreesRebuilt(JobClient job, int parallelism) throws Exception {
    await(
        job,
        Duration.ofMinutes(30),
        "the restored shards built no tree",
        () ->
            InProcessMetrics.values(shard(JobMetrics.INDEX_BUILD_MILLIS)).values().stream()
                    .filter(ms -> ms > 0)
                    .count()
                >= parallelism);
  }

  private static Path jobCheckpoints(TrainingJobConfig config, JobClient job) {
    return Path.of(java.net.URI.create(config.job.checkpointDir))
        .resolve(job.getJobID().toString());
  }

  private static Optional<Path> latestCheckpoint(TrainingJobConfig config, JobClient job)
      throws IOException {
    Path dir = jobCheckpoints(config, job);
    if (!Files.isDirectory(dir)) {
      return Optional.empty();
    }
    try (Stream<Path> chks = Files.list(dir)) {
      return chks.filter(c -> c.getFileName().toString().matches("chk-\\d+"))
          .filter(c -> Files.exists(c.resolve("_metadata")))
          .max(java.util.Comparator.comparingLong(ScaleBenchmark::checkpointNumber));
    }
  }

  private static Path awaitCheckpointAfter(
      TrainingJobConfig config, JobClient job, Optional<Path> previous) throws Exception {
    long after = previous.map(ScaleBenchmark::checkpointNumber).orElse(0L);
    long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
    while (System.nanoTime() < deadline) {
      LocalJob.failIfEnded(job);
      Optional<Path> latest = latestCheckpoint(config, job);
      if (latest.isPresent() && checkpointNumber(latest.get()) > after) {
        return latest.get();
      }
      Thread.sleep(500);
    }
    throw new IllegalStateException("no checkpoint completed within 10 minutes");
  }

  private static long checkpointNumber(Path chk) {
    return Long.parseLong(chk.getFileName().toString().substring(4));
  }

  private static long sizeOf(Path dir) throws IOException {
    long[] bytes = {0};
    Files.walkFileTree(
        dir,
        new java.nio.file.SimpleFileVisitor<>() {
          @Override
          public java.nio.file.FileVisitResult visitFile(
              Path file, java.nio.file.attribute.BasicFileAttributes attributes) {
            bytes[0] += attributes.size();
            return java.nio.file.FileVisitResult.CONTINUE;
          }

          @Override
          public java.nio.file.FileVisitResult visitFileFailed(Path file, IOException e) {
            return java.nio.file.FileVisitResult.CONTINUE; // deleted while walking
          }
        });
    return bytes[0];
  }
}
