package io.dynnibal.tests.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.eval.RetrievalEvaluator;
import io.dynnibal.eval.RetrievalMetrics;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.schemas.DeadLetter;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.snapshot.ParameterSnapshots;
import io.dynnibal.tests.harness.StreamingClusterExtension;
import io.dynnibal.tests.harness.TrainingJobs;
import io.dynnibal.trainer.FaultInjection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole streaming job on a real broker and MiniCluster (parallelism 2, RocksDB, checkpoints):
 * targets join and leave, batches are trained with index negatives, model updates go round the
 * Kafka feedback edge and the shards re-encode and repair; then stop, restore from the retained
 * checkpoint and continue.
 */
class StreamingTrainingJobTest {
  @RegisterExtension
  static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 2);

  private static final String DOOMED = "doomed";

  @Test
  @Timeout(300)
  void trainsReencodesRepairsAndResumesFromACheckpoint(EmbeddedKafkaBroker kafka) throws Exception {
    SyntheticCorpus corpus = new SyntheticCorpus(150, 300, 8, 3, 11);
    TrainingJobConfig config = config(kafka);
    kafka.createTopics(JobTopics.all(config, 2, (short) 1));
    List<TargetText> targets = new ArrayList<>(corpus.targets);
    // A near-copy of item0: a hard negative for item0's queries, so the sampler finds it while it
    // exists.
    targets.add(new TargetText(DOOMED, corpus.targets.get(0).text().replace("item0", DOOMED)));

    RetrievalMetrics before;
    try (DualEncoder untrained = DualEncoder.create(config.model(), config.job.seed)) {
      before = RetrievalEvaluator.evaluate(untrained, corpus.targets, corpus.eval);
    }

    List<TrainingMetrics> seen = new ArrayList<>();
    try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties());
        TopicReader<TrainingMetrics> metrics =
            new TopicReader<>(
                kafka.clientProperties(), config.metricsTopic(), TrainingMetrics.class);
        TopicReader<DeadLetter> deadLetters =
            new TopicReader<>(
                kafka.clientProperties(), config.deadLettersTopic(), DeadLetter.class)) {
      publisher.publishTargets(config.targetsTopic(), targets, null);
      JobClient job = start(config, null);
      TrainingJobs.awaitTargetsIndexed(kafka.clientProperties(), config, job);

      int epoch = 0;
      // The first epoch has 16 extra queries of item0, whose hardest negative is the near-copy.
      List<LabelledQuery> first = new ArrayList<>(corpus.train);
      for (int i = 0; i < 16; i++) {
        first.add(corpus.query(0, "q:item0.extra" + i));
      }
      publisher.publishPairs(config.pairsTopic(), first, "e" + epoch++, 0, null);
      long published =
          first.size(); // batches of 16 carry over between epochs: step n needs 16n pairs published
      TrainingMetrics last =
          await(metrics, seen, job, m -> m.getStep() >= first.size() / config.training.batchSize);
      assertTrue(
          last.getWatchedNegatives().get(DOOMED) > 0,
          "the near-copy was never drawn while it existed: the deletion audit could not fail "
              + last);

      publisher.deleteTarget(config.targetsTopic(), DOOMED);
      publisher.publishRaw(config.pairsTopic(), "garbage", new byte[] {1, 2, 3});
      // Train epochs until 3 re-encode cycles happened and the index has long dropped the target
      // (batches merged on two subtasks may reach the trainer slightly out of order: the audit
      // starts 10 steps after the index shrank).
      long shrankAt = -1;
      while (epoch < 8
          && (shrankAt < 0 || last.getReencodeCycles() < 3 || last.getStep() < shrankAt + 12)) {
        publisher.publishPairs(config.pairsTopic(), corpus.train, "e" + epoch++, 0, null);
        published += corpus.train.size();
        long target = published / config.training.batchSize;
        last = await(metrics, seen, job, m -> m.getStep() >= target);
        if (shrankAt < 0) {
          shrankAt =
              seen.stream()
                  .filter(m -> m.getIndexTargets() == corpus.targets.size())
                  .mapToLong(TrainingMetrics::getStep)
                  .min()
                  .orElse(-1);
        }
      }
      assertTrue(
          shrankAt >= 0,
          "the index never reported " + corpus.targets.size() + " targets after the delete");
      long auditFrom = shrankAt + 10;
      long afterDelete =
          seen.stream()
              .filter(m -> m.getStep() == auditFrom)
              .findFirst()
              .orElseThrow()
              .getWatchedNegatives()
              .get(DOOMED);
      assertTrue(
          last.getReencodeCycles() >= 3, "only " + last.getReencodeCycles() + " re-encode cycles");
      assertEquals(
          corpus.targets.size(), last.getIndexTargets(), "index size vs live targets on the topic");

      // A duplicate of the first model update, long after every shard moved past it: ignored by the
      // version rule.
      publisher.publishRaw(
          config.modelUpdatesTopic(), "replayed", firstValue(kafka, config.modelUpdatesTopic()));
      // A pair for the deleted target, once the index had dropped it: dead-lettered, not trained.
      publisher.publishPairs(
          config.pairsTopic(),
          List.of(new LabelledQuery("q:doomed", "anything", DOOMED)),
          "late",
          0,
          null);
      publisher.publishPairs(config.pairsTopic(), corpus.train, "e" + epoch++, 0, null);
      published += 1 + corpus.train.size();
      long target = published / config.training.batchSize;
      last = await(metrics, seen, job, m -> m.getStep() >= target);
      assertEquals(
          afterDelete,
          last.getWatchedNegatives().get(DOOMED),
          "the deleted target was drawn as a negative after its deletion");
      assertTrue(
          last.getModelUpdatesIgnored() >= 1,
          "the replayed old model update was not ignored: " + last);

      float firstLoss = meanLoss(seen.subList(0, 5));
      float lastLoss = meanLoss(seen.subList(seen.size() - 5, seen.size()));
      assertTrue(lastLoss < firstLoss * 0.7, "loss " + firstLoss + " -> " + lastLoss);
      assertTrue(last.getFeedbackLatencySteps() != null, "no feedback latency measured");

      List<DeadLetter> letters = new ArrayList<>();
      long dlDeadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (!(has(letters, "decode-pairs") && has(letters, "not in the index"))
          && System.nanoTime() < dlDeadline) {
        letters.addAll(deadLetters.poll(Duration.ofMillis(200)));
      }
      assertTrue(has(letters, "decode-pairs"), "malformed pair not dead-lettered: " + letters);
      assertTrue(
          has(letters, "not in the index"),
          "pair of the deleted target not dead-lettered: " + letters);

      // Stop: cancel the job; its last completed checkpoint is retained. Its Kafka transactions may
      // not be committed yet (commits follow checkpoint completion): the restore commits them.
      // Whatever the job did after that checkpoint was in open transactions, which are aborted and
      // redone.
      job.cancel().get();
      Path checkpoint =
          latestCheckpoint(
              CLUSTER.workDir().resolve("checkpoints").resolve(job.getJobID().toString()));
      for (List<TrainingMetrics> more = metrics.poll(Duration.ofSeconds(1));
          !more.isEmpty();
          more = metrics.poll(Duration.ofSeconds(1))) {
        seen.addAll(more);
      }
      last = seen.get(seen.size() - 1);
      long stoppedAt = last.getStep();
      try (DualEncoder trained =
          ParameterSnapshots.readEncoder(newestModel(Path.of(config.job.snapshotDir)))) {
        RetrievalMetrics after = RetrievalEvaluator.evaluate(trained, corpus.targets, corpus.eval);
        assertTrue(
            after.recallAt(10) > before.recallAt(10) + 0.2,
            "recall@10 " + before.figures() + " -> " + after.figures());
      }

      // Restore from the checkpoint and continue: the pairs after it are trained again, under the
      // same step numbers.
      JobClient resumed = start(config, checkpoint.toUri().toString());
      try {
        publisher.publishPairs(config.pairsTopic(), corpus.train, "e" + epoch, 0, null);
        published += corpus.train.size();
        long goal = published / config.training.batchSize;
        TrainingMetrics end = await(metrics, seen, resumed, m -> m.getStep() >= goal);
        List<Long> steps = seen.stream().map(TrainingMetrics::getStep).toList();
        List<Long> expected =
            java.util.stream.LongStream.rangeClosed(1, end.getStep()).boxed().toList();
        assertEquals(
            expected,
            steps,
            "committed steps must be 1..n, each once, across the stop and restore");
        assertTrue(
            end.getPairsTrained() > last.getPairsTrained(), "pairs trained did not continue");
        assertTrue(
            end.getReencodeCycles() >= last.getReencodeCycles(), "re-encode cycles went backwards");
        assertEquals(
            corpus.targets.size(),
            end.getIndexTargets(),
            "the index rebuilt from RocksDB state lost targets");
      } finally {
        resumed.cancel().get();
      }
    }
  }

  /** The first committed value of a topic, as bytes. */
  private static byte[] firstValue(EmbeddedKafkaBroker kafka, String topic) {
    java.util.Properties props = kafka.clientProperties();
    props.put("group.id", "first-value-" + System.nanoTime());
    props.put("auto.offset.reset", "earliest");
    props.put("isolation.level", "read_committed");
    try (var consumer =
        new org.apache.kafka.clients.consumer.KafkaConsumer<>(
            props,
            new org.apache.kafka.common.serialization.StringDeserializer(),
            new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
      consumer.subscribe(List.of(topic));
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (System.nanoTime() < deadline) {
        for (var record : consumer.poll(Duration.ofMillis(200))) {
          return record.value();
        }
      }
    }
    throw new AssertionError("no committed record on " + topic);
  }

  /** The newest model version any run wrote: {@code <snapshot dir>/run-<id>/model-<version>}. */
  private static java.net.URI newestModel(Path snapshotDir) throws Exception {
    try (Stream<Path> files = Files.walk(snapshotDir, 2)) {
      return files
          .filter(p -> p.getFileName().toString().startsWith("model-"))
          .filter(p -> p.getParent().getFileName().toString().startsWith("run-"))
          .max(java.util.Comparator.comparing(p -> p.getFileName().toString()))
          .orElseThrow(() -> new AssertionError("no model version under " + snapshotDir))
          .toUri();
    }
  }

  private static Path latestCheckpoint(Path jobCheckpoints) throws Exception {
    try (Stream<Path> entries = Files.list(jobCheckpoints)) {
      return entries
          .filter(p -> p.getFileName().toString().startsWith("chk-"))
          .filter(p -> Files.exists(p.resolve("_metadata")))
          .max(
              java.util.Comparator.comparingLong(
                  p -> Long.parseLong(p.getFileName().toString().substring(4))))
          .orElseThrow(() -> new AssertionError("no completed checkpoint under " + jobCheckpoints));
    }
  }

  private static TrainingJobConfig config(EmbeddedKafkaBroker kafka) {
    TrainingJobConfig c = TrainingJobs.smallConfig(kafka, CLUSTER.workDir(), "job-test");
    c.training.batchSize = 16;
    c.negatives.negativesPerExample = 2;
    c.reencode.reencodeEvery = 4;
    c.index.landmarks = 16;
    c.reencode.regressionSamples = 64;
    c.job.seed = 7;
    c.job.watchTargets = DOOMED + ",item1,item2,item3,item4,item5,item6,item7,item8,item9";
    return c.validate();
  }

  private static JobClient start(TrainingJobConfig config, String savepoint) throws Exception {
    return TrainingJobs.start(
        config,
        FaultInjection.NONE,
        conf -> {
          if (savepoint != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
          }
        });
  }

  private static TrainingMetrics await(
      TopicReader<TrainingMetrics> reader,
      List<TrainingMetrics> seen,
      JobClient job,
      Predicate<TrainingMetrics> done)
      throws Exception {
    return TrainingJobs.await(reader, seen, job, Duration.ofSeconds(90), done);
  }

  private static float meanLoss(List<TrainingMetrics> metrics) {
    return (float) metrics.stream().mapToDouble(TrainingMetrics::getLoss).average().orElseThrow();
  }

  private static boolean has(List<DeadLetter> letters, String text) {
    return letters.stream()
        .anyMatch(d -> d.getStage().equals(text) || d.getMessage().contains(text));
  }
}
