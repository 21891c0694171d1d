package io.dynnibal.local;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.eval.Bm25Baseline;
import io.dynnibal.eval.RetrievalEvaluator;
import io.dynnibal.eval.RetrievalMetrics;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.snapshot.ParameterSnapshots;
import io.dynnibal.training.ProgressBar;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.flink.core.execution.JobClient;

/**
 * {@code ./dynnibal demo}: the whole system on one machine. An in-process Kafka broker and a Flink
 * MiniCluster (parallelism 2, RocksDB, checkpoints) run the streaming training job over a corpus
 * (the bundled Debian packages by default): targets are published and indexed, training pairs are
 * replayed for a number of epochs, a progress bar follows the metrics topic, and the dev split is
 * evaluated before and after with the exact evaluator.
 *
 * <p>Shaped like DJL's examples: {@link #run} takes the whole configuration and returns the
 * figures, so a test can call it with a small corpus.
 */
public final class Demo {
  private Demo() {}

  /**
   * @param epochs passes over the training pairs
   * @param maxSteps stop after this many steps (0: when the epochs end)
   * @param evalLimit evaluate on at most this many queries (0: all)
   */
  public record Options(
      Corpus corpus,
      TrainingJobConfig job,
      int epochs,
      long maxSteps,
      int evalLimit,
      Path workDir,
      long seed) {}

  /**
   * @param meanShardMillis per shard, its mean time to answer a batch over the run
   * @param meanStaleness mean cache staleness in steps over the run
   */
  public record Result(
      RetrievalMetrics bm25,
      RetrievalMetrics before,
      RetrievalMetrics after,
      TrainingMetrics last,
      long steps,
      double trainSeconds,
      double pairsPerSecond,
      double indexSeconds,
      long deadLetters,
      URI model,
      long checkpointBytes,
      java.util.Map<String, Double> meanShardMillis,
      double meanStaleness) {}

  public static Result run(Options options, PrintStream out) throws Exception {
    Corpus corpus = options.corpus();
    TrainingJobConfig config = options.job();
    Path work = Files.createDirectories(options.workDir());
    config.job.checkpointDir = work.resolve("checkpoints").toUri().toString();
    config.job.snapshotDir = work.resolve("snapshots").toString();
    List<LabelledQuery> eval = corpus.evalSubset(options.evalLimit(), options.seed());
    int stepsPerEpoch = corpus.train().size() / config.training.batchSize;
    long plannedSteps = (long) stepsPerEpoch * options.epochs();
    if (options.maxSteps() > 0) {
      plannedSteps = Math.min(plannedSteps, options.maxSteps());
    }
    config.job.maxSteps = plannedSteps;
    config.training.decaySteps = (int) plannedSteps;
    config.validate();

    out.printf(
        "corpus: %s - %,d targets, %,d training pairs, %,d evaluation queries%n",
        corpus.name(), corpus.targets().size(), corpus.train().size(), eval.size());
    RetrievalMetrics bm25 = Bm25Baseline.evaluate(corpus.targets(), eval);
    out.printf(
        "BM25: R@1 %.3f, R@10 %.3f, R@100 %.3f%n",
        bm25.recallAt(1), bm25.recallAt(10), bm25.recallAt(100));
    RetrievalMetrics before;
    try (DualEncoder untrained = DualEncoder.create(config.model(), config.job.seed)) {
      untrained
          .describeTokenBudgets(
              corpus.targets().stream().map(TargetText::text).toList(),
              eval.stream().map(LabelledQuery::text).toList())
          .forEach(out::println);
      out.print("evaluating the untrained encoder... ");
      before = RetrievalEvaluator.evaluate(untrained, corpus.targets(), eval);
    }
    out.printf(
        "R@1 %.3f, R@10 %.3f, R@100 %.3f%n",
        before.recallAt(1), before.recallAt(10), before.recallAt(100));

    try (EmbeddedKafkaBroker kafka = EmbeddedKafkaBroker.start(work.resolve("kafka"))) {
      config.kafka.bootstrapServers = kafka.bootstrapServers();
      kafka.createTopics(JobTopics.all(config, 2, (short) 1));
      JobClient job;
      long indexStart = System.nanoTime();
      try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties())) {
        out.println(
            "publishing targets and starting the job (Flink MiniCluster, parallelism "
                + config.job.parallelism
                + ", RocksDB state)...");
        publisher.publishTargets(config.targetsTopic(), corpus.targets(), null);
        job = LocalJob.start(config, "dynnibal demo");
        ProgressBar indexing = new ProgressBar(out, "indexing", corpus.targets().size());
        LocalJob.awaitTargetsRead(
            kafka.clientProperties(),
            config,
            job,
            () ->
                indexing.draw(-1, String.format("%.0f s", (System.nanoTime() - indexStart) / 1e9)));
        indexing.finish(corpus.targets().size(), "");
        double indexSeconds = (System.nanoTime() - indexStart) / 1e9;

        Random random = new Random(options.seed());
        for (int e = 0; e < options.epochs(); e++) {
          List<LabelledQuery> shuffled = new ArrayList<>(corpus.train());
          Collections.shuffle(shuffled, random);
          publisher.publishPairs(
              config.pairsTopic(), shuffled, "e" + e, System.currentTimeMillis(), null);
        }
        LocalJob.Followed followed =
            LocalJob.follow(kafka.clientProperties(), config, job, plannedSteps, "training", out);
        TrainingMetrics last = followed.last();
        double trainSeconds = (last.getTimeMs() - followed.first().getTimeMs()) / 1000.0;
        // At max.steps the trainer writes the final model: wait for it.
        URI model = LocalJob.awaitFinalModel(config, plannedSteps, job);
        LocalJob.stop(job);
        long checkpointBytes =
            retainedCheckpointBytes(work.resolve("checkpoints").resolve(job.getJobID().toString()));
        long deadLetters = count(kafka, config.deadLettersTopic());
        out.print("evaluating the trained encoder... ");
        RetrievalMetrics after;
        try (DualEncoder trained = ParameterSnapshots.readEncoder(model)) {
          after = RetrievalEvaluator.evaluate(trained, corpus.targets(), eval);
        }
        out.printf(
            "R@1 %.3f, R@10 %.3f, R@100 %.3f%n",
            after.recallAt(1), after.recallAt(10), after.recallAt(100));
        double pairsPerSecond = last.getPairsTrained() / Math.max(1e-9, trainSeconds);
        return new Result(
            bm25,
            before,
            after,
            last,
            last.getStep(),
            trainSeconds,
            pairsPerSecond,
            indexSeconds,
            deadLetters,
            model,
            checkpointBytes,
            followed.meanShardMillis(),
            followed.meanStaleness());
      }
    }
  }

  private static long count(EmbeddedKafkaBroker kafka, String topic) {
    try (TopicReader<io.dynnibal.schemas.DeadLetter> reader =
        new TopicReader<>(kafka.clientProperties(), topic, io.dynnibal.schemas.DeadLetter.class)) {
      long n = 0;
      for (int empty = 0; empty < 3; ) {
        int got = reader.poll(Duration.ofMillis(300)).size();
        n += got;
        empty = got == 0 ? empty + 1 : 0;
      }
      return n;
    }
  }

  /**
   * Bytes of the latest retained checkpoint: its own directory plus the shared RocksDB files
   * (incremental checkpoints keep SST files there). Almost all of it is the shards' target state.
   */
  static long retainedCheckpointBytes(Path jobDir) throws IOException {
    if (!Files.isDirectory(jobDir)) {
      return 0;
    }
    long bytes = 0;
    try (Stream<Path> files = Files.walk(jobDir)) {
      for (Path p : files.filter(Files::isRegularFile).toList()) {
        String parent = p.getParent().getFileName().toString();
        if (parent.equals("shared") || parent.startsWith("chk-")) {
          bytes += Files.size(p);
        }
      }
    }
    return bytes;
  }
}
