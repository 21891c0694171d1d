package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.schemas.DeadLetter;
import io.dynnibal.schemas.Matrix;
import io.dynnibal.schemas.ModelUpdate;
import io.dynnibal.schemas.SingleObjectCodec;
import io.dynnibal.schemas.Target;
import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.schemas.TrainingPair;
import io.dynnibal.snapshot.ParameterSnapshots;
import io.dynnibal.stream.DeadLetters;
import io.dynnibal.tests.harness.StreamingClusterExtension;
import io.dynnibal.tests.harness.TrainingJobs;
import io.dynnibal.tests.training.SyntheticCorpus;
import io.dynnibal.trainer.FaultInjection;
import io.dynnibal.training.SkippedStep;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.flink.core.execution.JobClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every kind of bad input on every topic, into a running job (real broker, MiniCluster, RocksDB):
 * each one becomes a dead letter with its reason and stage, the job keeps training through a
 * refused step, and the pairs reconcile by id: published = trained + dead-lettered.
 */
class BadInputMatrixTest {
  @RegisterExtension
  static final StreamingClusterExtension CLUSTER = StreamingClusterExtension.withTaskManagers(1, 2);

  @Test
  @Timeout(240)
  void badRecordsAreDeadLetteredWithTheirReasonAndNothingIsLost(EmbeddedKafkaBroker kafka)
      throws Exception {
    SyntheticCorpus corpus = new SyntheticCorpus(80, 200, 8, 2, 13);
    TrainingJobConfig config = TrainingJobs.smallConfig(kafka, CLUSTER.workDir(), "bad-input");
    config.kafka.topicPrefix = "bad.";
    config.training.batchSize = 16;
    config.reencode.reencodeEvery = 4;
    config.validate();
    kafka.createTopics(JobTopics.all(config, 2, (short) 1));
    String huge =
        "enormous "
            + "description words "
                .repeat(50_000); // 0.9 MB (under Kafka's 1 MB default): only 64 words are read
    List<TargetText> targets = new ArrayList<>(corpus.targets);
    targets.add(new TargetText("huge", huge));

    SingleObjectCodec<Target> targetCodec = SingleObjectCodec.of(Target.class);
    SingleObjectCodec<TrainingPair> pairCodec = SingleObjectCodec.of(TrainingPair.class);
    SingleObjectCodec<ModelUpdate> updateCodec = SingleObjectCodec.of(ModelUpdate.class);
    // The trainer refuses its third step once, as it would a non-finite loss: that batch's pairs
    // are dead-lettered one by one.
    JobClient job = TrainingJobs.start(config, new RefuseStepOnce(3), conf -> {});
    try (CorpusPublisher publisher = new CorpusPublisher(kafka.clientProperties());
        TopicReader<TrainingMetrics> metrics =
            new TopicReader<>(
                kafka.clientProperties(), config.metricsTopic(), TrainingMetrics.class);
        TopicReader<DeadLetter> deadLetters =
            new TopicReader<>(
                kafka.clientProperties(), config.deadLettersTopic(), DeadLetter.class)) {
      publisher.publishTargets(config.targetsTopic(), targets, null);
      // Bad targets: garbage bytes, a record of another type, a key that is not the id, no text. (A
      // keyless delete cannot happen: a compacted topic refuses records without a key.)
      publisher.publishRaw(config.targetsTopic(), "garbage", new byte[] {(byte) 0xC3, 0x01, 9, 9});
      publisher.publishRaw(
          config.targetsTopic(), "foreign", pairCodec.encode(pair("p", "some query", "item1")));
      publisher.publishRaw(
          config.targetsTopic(),
          "other-key",
          targetCodec.encode(Target.newBuilder().setTargetId("real-id").setText("text").build()));
      publisher.publishRaw(
          config.targetsTopic(),
          "empty",
          targetCodec.encode(Target.newBuilder().setTargetId("empty").setText("  -- ").build()));
      // A hostile target: a valid header, then a target_id claiming 1,000,000 bytes, with 3 left.
      publisher.publishRaw(
          config.targetsTopic(),
          "hostile",
          hostile(
              targetCodec.encode(Target.newBuilder().setTargetId("h").setText("h").build()),
              1_000_000,
              3));
      // At Kafka's record limit, a key and an id that differ, each quoted in full by the reason: a
      // dead letter carrying all of it would not fit a record of its own.
      String bigKey = "K".repeat(300_000);
      byte[] bigTarget =
          targetCodec.encode(
              Target.newBuilder()
                  .setTargetId("T".repeat(300_000))
                  .setText("x ".repeat(150_000))
                  .build());
      publisher.publishRaw(config.targetsTopic(), bigKey, bigTarget);
      TrainingJobs.awaitTargetsIndexed(kafka.clientProperties(), config, job);
      // Bad model updates (once the job runs: a new job reads that topic from its end): garbage,
      // NaN, wrong shape.
      publisher.publishRaw(config.modelUpdatesTopic(), "garbage", new byte[] {42});
      publisher.publishRaw(
          config.modelUpdatesTopic(), "nan", updateCodec.encode(update(99, 8, 32, Float.NaN)));
      publisher.publishRaw(
          config.modelUpdatesTopic(), "shape", updateCodec.encode(update(98, 5, 32, 0.1f)));
      // Updates of the right shape that are not this job's to take: another job's (two jobs on one
      // topic prefix), one whose snapshot is outside the job's snapshot.dir, and one whose
      // snapshot is of another model than the job's (refused by each shard key before loading).
      String ours = config.kafka.groupId;
      String inside = Path.of(config.job.snapshotDir).resolve("run-x/model-97").toUri().toString();
      publisher.publishRaw(
          config.modelUpdatesTopic(),
          "foreign-job",
          updateCodec.encode(from(update(97, 8, 32, 0.1f), "another-job", inside, 1L << 40)));
      publisher.publishRaw(
          config.modelUpdatesTopic(),
          "outside",
          updateCodec.encode(
              from(update(96, 8, 32, 0.1f), ours, "file:///etc/model-96", 1L << 40)));
      DualEncoderConfig model = config.model();
      DualEncoderConfig other =
          new DualEncoderConfig(
              model.features(),
              model.embeddingDim(),
              model.hiddenDim() / 2,
              model.outputDim(),
              model.sharedTowers(),
              model.scoreScale());
      URI otherModel;
      try (DualEncoder encoder = DualEncoder.create(other, 1)) {
        otherModel =
            ParameterSnapshots.write(
                encoder, Path.of(config.job.snapshotDir).resolve("run-x").toUri(), 500, 1);
      }
      publisher.publishRaw(
          config.modelUpdatesTopic(),
          "other-model",
          updateCodec.encode(
              from(update(500, 8, 32, 0.1f), ours, otherModel.toString(), Long.MAX_VALUE)));
      // A bad progress report: the pace that reads them dead-letters it and keeps its pace.
      publisher.publishRaw(config.progressTopic(), "garbage", new byte[] {7});

      // Pairs: valid ones (one with a 1 MB query), garbage, a foreign record, an empty query, an
      // unknown target.
      List<LabelledQuery> valid = new ArrayList<>(corpus.train);
      valid.add(new LabelledQuery("q:huge", huge, "item3"));
      List<LabelledQuery> unknown =
          List.of(new LabelledQuery("q:ghost", "where is it", "no-such-target"));
      int published = valid.size() + unknown.size();
      int batch = config.training.batchSize;
      while (published % batch
          != 0) { // whole batches only: a partial batch waits for more pairs, by design
        valid.add(corpus.query(published % corpus.targets.size(), "q:fill" + published));
        published++;
      }
      List<LabelledQuery> all = new ArrayList<>(valid);
      all.addAll(unknown);
      Collections.shuffle(all, new java.util.Random(3));
      publisher.publishPairs(config.pairsTopic(), all, "0", 0, null);
      publisher.publishRaw(config.pairsTopic(), "garbage", new byte[] {1, 2, 3, 4, 5});
      publisher.publishRaw(
          config.pairsTopic(),
          "foreign",
          targetCodec.encode(Target.newBuilder().setTargetId("x").setText("y").build()));
      publisher.publishRaw(
          config.pairsTopic(), "empty-query", pairCodec.encode(pair("empty-query", " ", "item2")));
      // 15 bytes claiming a 2 GB pair_id.
      publisher.publishRaw(
          config.pairsTopic(),
          "hostile",
          hostile(pairCodec.encode(pair("h", "q", "item1")), Integer.MAX_VALUE, 0));

      List<TrainingMetrics> steps = new ArrayList<>();
      TrainingMetrics last = TrainingJobs.awaitStep(metrics, steps, job, published / batch - 1);
      // A stray update of this job at a huge version, from a trainer generation below the one
      // every shard holds by now: fenced, so it cannot freeze the shards.
      assertTrue(last.getReencodeCycles() >= 1, "every shard holds a trainer's update");
      publisher.publishRaw(
          config.modelUpdatesTopic(),
          "stray",
          updateCodec.encode(from(update(1_000_000, 8, 32, 0.1f), ours, inside, 0)));
      int keys = config.job.shards;
      int expected = 17 + 2 * keys;
      List<DeadLetter> letters = new ArrayList<>();
      long dlDeadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (letters.size() < expected + batch - 1 && System.nanoTime() < dlDeadline) {
        letters.addAll(deadLetters.poll(Duration.ofMillis(200)));
      }
      letters.addAll(deadLetters.poll(Duration.ofSeconds(1)));
      List<String> refused = new ArrayList<>();
      List<DeadLetter> bad = new ArrayList<>();
      for (DeadLetter d : letters) {
        if (d.getStage().equals("trainer") && d.getMessage().contains("refused at step 3")) {
          refused.add(keyOf(d));
        } else {
          bad.add(d);
        }
      }
      expect(letters, "decode-targets", "garbage", "");
      expect(letters, "decode-targets", "foreign", "TrainingPair");
      expect(letters, "decode-targets", "other-key", "differs from target_id");
      expect(letters, "decode-targets", "empty", "no text");
      expect(letters, "decode-model-updates", "garbage", "");
      expect(letters, "decode-model-updates", "nan", "non-finite");
      expect(letters, "decode-model-updates", "shape", "this job's shape");
      expect(letters, "decode-pairs", "garbage", "");
      expect(letters, "decode-pairs", "foreign", "Target");
      expect(letters, "decode-pairs", "empty-query", "no query text");
      expect(letters, "decode-targets", "hostile", "a length it declares exceeds");
      expect(letters, "decode-pairs", "hostile", "a length it declares exceeds");
      expect(letters, "trainer", "q:ghost#0", "not in the index");
      expect(letters, "mining-pace", "garbage", "");
      expect(letters, "decode-model-updates", "foreign-job", "is of job \"another-job\"");
      expect(letters, "decode-model-updates", "outside", "outside this job's snapshot.dir");
      assertEquals(
          keys,
          bad.stream()
              .filter(
                  d ->
                      d.getStage().equals("shard-index")
                          && d.getMessage().contains("of another model than this job's"))
              .count(),
          "each key refuses the other model's snapshot before loading it");
      assertEquals(
          keys,
          bad.stream()
              .filter(d -> d.getMessage().contains("a superseded trainer's, refused"))
              .count(),
          "each key fences the stray update");
      DeadLetter big =
          letters.stream()
              .filter(d -> d.getKeySize() != null && d.getKeySize() == bigKey.length())
              .findFirst()
              .orElseThrow(() -> new AssertionError("no dead letter for the record at the limit"));
      assertEquals("decode-targets", big.getStage());
      assertEquals(DeadLetters.MAX_KEY_BYTES, big.getKey().remaining());
      assertEquals(bigTarget.length, big.getPayloadSize());
      assertTrue(
          big.getMessage().contains("differs from target_id")
              && big.getMessage().length() < DeadLetters.MAX_MESSAGE_CHARS + 100,
          big.getMessage().substring(0, 200));
      assertEquals(
          expected,
          bad.size(),
          "one dead letter per bad record: "
              + bad.stream().map(d -> d.getStage() + "/" + d.getMessage()).toList());
      // The refused batch: its pairs but an unknown one (dead-lettered before the step).
      assertTrue(
          refused.size() == batch || refused.size() == batch - 1,
          "pairs of the refused batch: " + refused);

      // By pair id: every decodable pair was trained or dead-lettered, once; the huge target is
      // indexed.
      List<String> accounted = new ArrayList<>(TrainingJobs.trainedPairIds(steps));
      accounted.addAll(refused);
      accounted.add("q:ghost#0");
      Collections.sort(accounted);
      List<String> sent = new ArrayList<>();
      all.forEach(q -> sent.add(CorpusPublisher.pairId(q, "0")));
      Collections.sort(sent);
      assertEquals(sent, accounted, "published = trained + dead-lettered, by pair id");
      assertEquals(published - unknown.size() - refused.size(), last.getPairsTrained());
      assertEquals(
          unknown.size() + refused.size(),
          last.getPairsDeadLettered(),
          "pairs dead-lettered by the trainer");
      assertEquals(1, last.getStepsRefused());
      assertEquals(
          corpus.targets.size() + 1, last.getIndexTargets(), "targets indexed (bad ones excluded)");
      assertTrue(!job.getJobStatus().get().isGloballyTerminalState(), "the job stopped");
    } finally {
      job.cancel().get();
    }
  }

  /** {@code update} as if job {@code job} made it at {@code generation}, its snapshot there. */
  private static ModelUpdate from(
      ModelUpdate update, String job, String snapshot, long generation) {
    return ModelUpdate.newBuilder(update)
        .setJob(job)
        .setRunId("x")
        .setGeneration(generation)
        .setSnapshotUri(snapshot)
        .build();
  }

  private static String keyOf(DeadLetter d) {
    return java.nio.charset.StandardCharsets.UTF_8.decode(d.getKey().duplicate()).toString();
  }

  /** Refuses the first attempt at {@code step}, as the trainer refuses a non-finite loss. */
  private static final class RefuseStepOnce implements FaultInjection {
    private static final long serialVersionUID = 1L;
    private final long step;
    private boolean refused;

    RefuseStepOnce(long step) {
      this.step = step;
    }

    @Override
    public void beforeStep(long next) {
      if (next == step && !refused) {
        refused = true;
        throw new SkippedStep("the loss is NaN (drill)");
      }
    }
  }

  private static void expect(List<DeadLetter> letters, String stage, String key, String reason) {
    boolean found =
        letters.stream()
            .anyMatch(
                d ->
                    d.getStage().equals(stage)
                        && d.getKey() != null
                        && key.equals(
                            java.nio.charset.StandardCharsets.UTF_8
                                .decode(d.getKey().duplicate())
                                .toString())
                        && d.getMessage().contains(reason));
    assertTrue(
        found,
        "no dead letter at "
            + stage
            + " for key "
            + key
            + " saying \""
            + reason
            + "\" in "
            + letters.stream().map(d -> d.getStage() + "/" + d.getMessage()).toList());
  }

  /**
   * The single-object header of {@code valid}, then a first string field declaring {@code length}
   * bytes and {@code following} bytes of it.
   */
  private static byte[] hostile(byte[] valid, long length, int following) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    out.write(valid, 0, 10);
    long v = (length << 1) ^ (length >> 63); // Avro's zig-zag varint
    while ((v & ~0x7FL) != 0) {
      out.write((int) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
    for (int i = 0; i < following; i++) {
      out.write('x');
    }
    return out.toByteArray();
  }

  private static TrainingPair pair(String id, String query, String target) {
    return TrainingPair.newBuilder()
        .setPairId(id)
        .setQueryId("q:" + id)
        .setQueryText(query)
        .setTargetId(target)
        .setEventTimeMs(0)
        .build();
  }

  private static ModelUpdate update(long version, int landmarks, int dim, float value) {
    List<Float> l = new ArrayList<>(Collections.nCopies(landmarks * dim, value));
    List<Float> sq = new ArrayList<>(Collections.nCopies(landmarks * landmarks, value));
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < landmarks; i++) {
      ids.add("item" + i);
    }
    return ModelUpdate.newBuilder()
        .setVersion(version)
        .setStep(1)
        .setSnapshotUri("file:///nowhere")
        .setLandmarkIds(ids)
        .setLandmarks(Matrix.newBuilder().setRows(landmarks).setCols(dim).setValues(l).build())
        .setProjection(
            Matrix.newBuilder().setRows(landmarks).setCols(landmarks).setValues(sq).build())
        .setCacheMap(
            Matrix.newBuilder().setRows(landmarks).setCols(landmarks).setValues(sq).build())
        .setRebuildLevel(null)
        .setDriftBound(null)
        .setCreatedMs(0)
        .build();
  }
}
