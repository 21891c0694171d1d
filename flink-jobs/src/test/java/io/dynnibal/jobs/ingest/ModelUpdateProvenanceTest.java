package io.dynnibal.jobs.ingest;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.schemas.CacheMapKind;
import io.dynnibal.schemas.Matrices;
import io.dynnibal.schemas.ModelUpdate;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A model update reaches the shards only when it is this job's and its snapshot is the job's. */
class ModelUpdateProvenanceTest {
  @TempDir Path snapshots;

  @Test
  void thisJobsUpdateUnderItsSnapshotDirectoryPasses() {
    assertDoesNotThrow(
        () ->
            DecodeModelUpdates.checkProvenance(
                update("job-a", snapshots.resolve("run-1/model-3").toUri().toString()),
                "job-a",
                snapshots.toString()));
  }

  @Test
  void anotherJobsUpdateIsRefused() {
    refused(update("job-b", snapshots.resolve("run-1/model-3").toUri().toString()), "of job");
  }

  @Test
  void anUpdateNamingNoJobIsRefused() {
    refused(update(null, snapshots.resolve("run-1/model-3").toUri().toString()), "names no job");
  }

  @Test
  void aSnapshotOutsideTheJobsDirectoryIsRefused() {
    refused(update("job-a", "file:///etc/model-3"), "outside this job's snapshot.dir");
    refused(
        update("job-a", snapshots.resolve("run-1/../../elsewhere/model-3").toUri().toString()),
        "outside this job's snapshot.dir");
    refused(update("job-a", "s3://bucket/model-3"), "is no path");
  }

  private void refused(ModelUpdate update, String reason) {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> DecodeModelUpdates.checkProvenance(update, "job-a", snapshots.toString()));
    assertTrue(e.getMessage().contains(reason), e.getMessage());
  }

  private static ModelUpdate update(String job, String snapshot) {
    float[][] identity = {{1, 0}, {0, 1}};
    return ModelUpdate.newBuilder()
        .setVersion(3)
        .setStep(300)
        .setSnapshotUri(snapshot)
        .setLandmarkIds(List.of("a", "b"))
        .setLandmarks(Matrices.of(identity))
        .setProjection(Matrices.of(identity))
        .setMapKind(CacheMapKind.LINEAR)
        .setCacheMap(Matrices.of(identity))
        .setCreatedMs(0)
        .setJob(job)
        .build();
  }
}
