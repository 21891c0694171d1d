package io.dynnibal.trainer;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.schemas.ModelUpdate;
import io.dynnibal.snapshot.SnapshotExistsException;
import io.dynnibal.state.TargetFeatures;
import java.io.UncheckedIOException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The trainer's half of the paper's re-encoding: every w steps a {@link ReencodeCycle} over the
 * regression reservoir gives the shards a {@link ModelUpdate} (new parameters, the landmarks and
 * the low-rank map from the previous version's cache, or an order to re-encode exactly).
 *
 * <p>Invariant: a version number never names two models. After a restore, the next version skips
 * every number a lost branch may have emitted ({@link #restartVersion}), is emitted at the first
 * step, and its map moves the restored version's cache ({@code map_from}); an update whose map was
 * fit on caches of several versions carries {@link #NO_MAP}, so every shard re-encodes exactly. A
 * number is taken by the atomic rename of its snapshot directory: when another trainer took it (a
 * superseded one still running), the update is numbered past every version on disk.
 *
 * <p>A snapshot that cannot be written (a full disk) costs the cycle, not the job: training goes
 * on, the shards keep their version, and the cycle is tried again w steps later.
 */
final class ModelUpdates {
  private static final Logger LOG = LoggerFactory.getLogger(ModelUpdates.class);

  /** {@code map_from} of an update whose map no shard may apply: no shard holds version -1. */
  static final long NO_MAP = -1;

  private final TrainerSettings settings;
  private final RegressionReservoir reservoir;
  private final FeedbackTracker feedback;
  private final StepMetrics metrics;
  private final ModelVersionStore versions;

  /** The version the shards are asked to hold now (0 before the first update). */
  private long version;

  /**
   * After a restore: the lowest number the next version may take (above every version a lost branch
   * may have emitted), and the next step emits it at once. 0 when no restore left such versions.
   */
  private long restartVersion;

  /**
   * After a snapshot could not be written: the first step that tries again (w steps later, so that
   * a full disk is not written to at every step); 0 otherwise.
   */
  private long retryStep;

  /**
   * The Nyström landmarks (the same targets at every version; null until the first cycle draws
   * them) with their cache vectors at the current version.
   */
  private List<TargetFeatures> landmarks;

  /** Who made an update: the job, the trainer's run and its fencing epoch. */
  record Provenance(String job, String runId, long generation) {
    /**
     * The fencing epoch of a trainer started from a checkpoint of epoch {@code saved} (0: none) as
     * task attempt {@code attempt}: the restore count plus one in the bits above 16, Flink's
     * attempt number below (two restores from the same checkpoint are two attempts). Every start of
     * the trainer gets a higher one than all before it.
     */
    static long next(long saved, int attempt) {
      return (((saved >>> 16) + 1) << 16) | Math.min(attempt, 0xFFFF);
    }
  }

  private final Provenance provenance;

  ModelUpdates(
      TrainerSettings settings,
      Provenance provenance,
      RegressionReservoir reservoir,
      FeedbackTracker feedback,
      StepMetrics metrics,
      ModelVersionStore versions) {
    this.settings = settings;
    this.provenance = provenance;
    this.reservoir = reservoir;
    this.feedback = feedback;
    this.metrics = metrics;
    this.versions = versions;
  }

  long version() {
    return version;
  }

  /**
   * Whether {@code step} is due an update: w steps after the last, or at once after a restore;
   * never for a sampler whose shards need no model updates (in-batch negatives need only
   * positives).
   */
  boolean due(long step) {
    return settings.sampler().publishesModelUpdates()
        && step >= retryStep
        && (restartVersion > 0 || step - feedback.stepOf(version) >= settings.reencodeEvery());
  }

  /**
   * Takes the checkpoint's version and landmarks; versions above it that the snapshot directory
   * holds belong to a lost branch, and the next update numbers past them. Their directories stay,
   * so that a second restore from the same checkpoint still sees them, and a shard that loaded one
   * can still encode with it; they go like any old version once every shard holds a newer one.
   */
  void restore(TrainerCheckpoint saved) {
    version = saved.version;
    // Checkpoints from before fixed landmarks have none, and a job restored with another d' cannot
    // use them: the next cycle draws them.
    landmarks =
        saved.landmarks == null || saved.landmarks.length != settings.landmarks()
            ? null
            : List.of(saved.landmarks);
    long newest = versions.newestVersion();
    restartVersion = Math.max(saved.restartVersion, newest > version ? newest + 1 : 0);
  }

  void save(TrainerCheckpoint c) {
    c.version = version;
    c.restartVersion = restartVersion;
    c.landmarks = landmarks == null ? null : landmarks.toArray(new TargetFeatures[0]);
  }

  /**
   * The model update of a re-encode cycle at {@code step}, when the reservoir holds enough targets
   * cached at the current version; otherwise null, and the next step tries again.
   */
  ModelUpdate next(DualEncoder encoder, long step, long batchId) {
    long started = System.nanoTime();
    long newVersion = Math.max(version + 1, restartVersion);
    ReencodeCycle.Outcome cycle;
    boolean exactRestart = false;
    try {
      cycle = cycle(encoder, reservoir.atVersion(version), newVersion, step);
      if (cycle == null && newVersion > version + 1) {
        // After a restore, shards that applied a lost version answer with its caches, so samples
        // at the restored version may never come. This update then re-encodes exactly, and
        // samples of any version do for its landmarks (their caches only fit the unused map).
        cycle = cycle(encoder, reservoir.all(), newVersion, step);
        exactRestart = cycle != null;
      }
    } catch (SnapshotExistsException e) {
      // Another trainer took the number: one that a restore superseded, still running (paused past
      // the heartbeat timeout, then resumed). A version never names two models: number past it.
      restartVersion = Math.max(newVersion, versions.newestVersion()) + 1;
      LOG.warn(
          "step {}: model version {} was written by another trainer ({}): the update is numbered"
              + " {} at the next step",
          step,
          newVersion,
          e.existing(),
          restartVersion);
      return null;
    } catch (UncheckedIOException e) {
      metrics.snapshotWriteFailed();
      retryStep = step + settings.reencodeEvery();
      LOG.warn(
          "step {}: model update {} not emitted ({}); training goes on, the shards keep version {},"
              + " next try at step {}",
          step,
          newVersion,
          e.getMessage(),
          version,
          retryStep);
      return null;
    } catch (IllegalStateException e) {
      LOG.warn("step {}: re-encode cycle skipped: {}", step, e.getMessage());
      return null;
    }
    if (cycle == null) {
      return null;
    }
    // The map moves the cache of the version before this one in the trainer's own history, which
    // after a restore is not the number before it (see the class comment).
    ModelUpdate update =
        ModelUpdate.newBuilder(cycle.update())
            // An exact restart's map was fit on caches of several versions: no shard may apply it
            // (no shard holds version -1), every one re-encodes at once.
            .setMapFrom(exactRestart ? NO_MAP : version)
            .setReencodeExactly(cycle.update().getReencodeExactly() || exactRestart)
            .setJob(provenance.job())
            .setRunId(provenance.runId())
            .setGeneration(provenance.generation())
            .build();
    if (!exactRestart) {
      metrics.reencoded(cycle.meanCosine(), cycle.minCosine());
    }
    if (update.getVersion() > version + 1) {
      LOG.info(
          "step {}: versions {} to {} were taken by a branch a restore discarded or by a superseded"
              + " trainer: model update {} replaces them (a shard that took one re-encodes exactly)",
          step,
          version + 1,
          update.getVersion() - 1,
          update.getVersion());
    }
    if (exactRestart) {
      LOG.info(
          "step {}: no samples cached at the restored version {}: the shards re-encode every"
              + " target exactly",
          step,
          version);
    } else if (update.getReencodeExactly()) {
      LOG.info(
          "step {}: the landmarks are new (the cache is in another basis): the shards re-encode"
              + " every target exactly",
          step);
    } else if (cycle.meanCosine() < settings.reencodeExactBelow()) { // false for NaN
      update = ModelUpdate.newBuilder(update).setReencodeExactly(true).build();
      LOG.info(
          "step {}: the map's held-out cosine {} is below reencode.exact.below {}: the shards"
              + " re-encode every target exactly",
          step,
          String.format("%.4f", cycle.meanCosine()),
          settings.reencodeExactBelow());
    }
    landmarks = update.getReencodeExactly() ? cycle.landmarksExact() : cycle.landmarksMoved();
    version = update.getVersion();
    restartVersion = 0;
    retryStep = 0;
    feedback.emitted(version, step);
    LOG.info(
        "step {}: model update {} emitted after batch {}, {} ms after the step ({}); map vs exact"
            + " re-encoding on held-out samples: cosine mean {}, min {}",
        step,
        version,
        batchId,
        (System.nanoTime() - started) / 1_000_000,
        update.getSnapshotUri(),
        String.format("%.4f", cycle.meanCosine()),
        String.format("%.4f", cycle.minCosine()));
    return update;
  }

  private ReencodeCycle.Outcome cycle(
      DualEncoder encoder, List<TargetFeatures> fresh, long newVersion, long step) {
    return ReencodeCycle.build(
        encoder,
        fresh,
        landmarks,
        settings.landmarks(),
        newVersion,
        step,
        versions.base(),
        settings.seed());
  }
}
