package io.dynnibal.schemas;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.apache.avro.specific.SpecificRecord;

/**
 * One realistic record of each topic type, every optional field filled so a round trip exercises
 * all of them.
 */
final class SampleRecords {
  private SampleRecords() {}

  static TrainingPair pair() {
    return TrainingPair.newBuilder()
        .setPairId("train:17")
        .setQueryId("q:libmoosex-role-timer-perl")
        .setQueryText("Moose role for timing method calls")
        .setTargetId("libmoosex-role-timer-perl")
        .setEventTimeMs(1_764_000_000_000L)
        .build();
  }

  static Target target() {
    return Target.newBuilder()
        .setTargetId("0ad")
        .setText("0ad\n0 A.D. is a real-time strategy game.")
        .build();
  }

  static Matrix matrix(int rows, int cols) {
    Float[] values = new Float[rows * cols];
    for (int i = 0; i < values.length; i++) {
      values[i] = i * 0.5f - 1f;
    }
    return Matrix.newBuilder().setRows(rows).setCols(cols).setValues(List.of(values)).build();
  }

  static ModelUpdate modelUpdate() {
    return ModelUpdate.newBuilder()
        .setVersion(3)
        .setStep(300)
        .setSnapshotUri("file:/tmp/snapshots/v3")
        .setLandmarkIds(List.of("0ad", "bash"))
        .setLandmarks(matrix(2, 4))
        .setProjection(matrix(2, 2))
        .setMapKind(CacheMapKind.LINEAR)
        .setCacheMap(matrix(2, 2))
        .setRebuildLevel(-3)
        .setDriftBound(0.25)
        .setCreatedMs(1_764_000_000_123L)
        .build();
  }

  static TrainingMetrics metrics() {
    return TrainingMetrics.newBuilder()
        .setStep(300)
        .setModelVersion(3)
        .setTimeMs(1_764_000_000_456L)
        .setSampler("dynnibal-mh")
        .setLoss(2.5)
        .setLearningRate(1e-3)
        .setStepsPerSecond(41.5)
        .setCacheStalenessSteps(12)
        .setMhAcceptanceRate(0.4)
        .setShardSamplingLatencyMs(Map.of("0", 3.5, "1", 4.0))
        .setEvalRecall(Map.of("1", 0.5, "10", 0.8))
        .setEvalMrr(Map.of("10", 0.6))
        .setRunId("3f2a9c1e")
        .build();
  }

  static DeadLetter deadLetter() {
    return DeadLetter.newBuilder()
        .setSourceTopic("pairs")
        .setPartition(1)
        .setOffset(42)
        .setKey(ByteBuffer.wrap(new byte[] {1, 2}))
        .setPayload(ByteBuffer.wrap(new byte[] {(byte) 0xC3, 0x01, 9}))
        .setErrorClass(RecordDecodingException.class.getName())
        .setMessage("truncated")
        .setStage("pairs-source")
        .setTimeMs(1_764_000_000_789L)
        .setPayloadSize(900_000)
        .build();
  }

  static TrainerProgress progress() {
    return TrainerProgress.newBuilder()
        .setBatchId(41)
        .setStep(40)
        .setTimeMs(1_764_000_000_999L)
        .build();
  }

  /** The sample of a topic record type. */
  static SpecificRecord of(Class<? extends SpecificRecord> type) {
    if (type == TrainingPair.class) return pair();
    if (type == Target.class) return target();
    if (type == ModelUpdate.class) return modelUpdate();
    if (type == TrainingMetrics.class) return metrics();
    if (type == DeadLetter.class) return deadLetter();
    if (type == TrainerProgress.class) return progress();
    throw new IllegalArgumentException("no sample for " + type);
  }
}
