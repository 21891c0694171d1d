package io.dynnibal.trainer;

import io.dynnibal.index.nystrom.ReEncodingRegression;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.features.Features;
import io.dynnibal.schemas.CacheMapKind;
import io.dynnibal.schemas.Matrices;
import io.dynnibal.schemas.ModelUpdate;
import io.dynnibal.snapshot.ParameterSnapshots;
import io.dynnibal.state.TargetFeatures;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * One approximate re-encoding (Alg. 4/5 of the paper) as the trainer runs it every w steps: encode
 * the d' landmarks and the reservoir's targets with the current target tower, fit the ridge
 * regression from their old cache vectors to the new encodings, write the parameter snapshot, and
 * describe it all in a {@link ModelUpdate}: the shards then move every cached vector by the d' x d'
 * map without re-encoding any target.
 *
 * <p>The landmarks are the same targets from version to version (the paper, App. C: "kept fixed
 * during training"), drawn once from the reservoir at the first cycle. Fresh landmarks every cycle
 * would change the basis of the cache each time, and a d' x d' map cannot carry a vector into a
 * subspace its old coordinates never saw, so a cache moved onto new landmarks can end further from
 * exact re-encoding than a cache not moved at all. The landmarks are encoded anyway (for the new
 * projection), so they are regression samples too.
 *
 * <p>The cycle that draws the landmarks marks its update for exact re-encoding. The cache it would
 * move is in another basis: at version 0 the shards project through random directions (no landmarks
 * exist yet), and a job restored with another d' held other landmarks. When d' < d a random
 * projection has already thrown away what the new landmarks' coordinates need, and no map from its
 * d' coordinates recovers it: every later cycle's map would move a cache that is still a linear
 * image of the version-0 random projection, and stay unfaithful.
 */
final class ReencodeCycle {
  static final double RIDGE = 1e-3;
  static final double EIGEN_FLOOR = 1e-6;

  /** Every this-many-th regression sample is held out of the diagnostic fit. */
  static final int HELD_OUT_EVERY = 10;

  /**
   * A cycle's update and how faithful its map is: on regression samples held out of a second,
   * diagnostic fit (every {@link #HELD_OUT_EVERY}th), the cosine between the map's move of their
   * old cache vector and their fresh Nyström vector (exact re-encoding), mean and minimum; NaN when
   * too few samples to hold any out. The landmark targets with their cache vectors at the update's
   * version, for the next cycle: as the shards will hold them after moving their cache by the map,
   * or after re-encoding it exactly.
   */
  record Outcome(
      ModelUpdate update,
      double meanCosine,
      double minCosine,
      List<TargetFeatures> landmarksMoved,
      List<TargetFeatures> landmarksExact) {}

  private ReencodeCycle() {}

  /**
   * @param fresh reservoir entries cached at the version being replaced
   * @param landmarkTargets the landmarks with their cache vectors at that version, or null to draw
   *     {@code landmarks} of them from {@code fresh} (the first cycle)
   * @return the update, or null when there are too few samples yet (fewer than 2 d', landmarks
   *     included)
   */
  static Outcome build(
      DualEncoder encoder,
      List<TargetFeatures> fresh,
      List<TargetFeatures> landmarkTargets,
      int landmarks,
      long newVersion,
      long step,
      URI snapshotBase,
      long seed) {
    List<TargetFeatures> rows = new ArrayList<>();
    if (landmarkTargets == null) {
      if (fresh.size() < 2 * landmarks) {
        return null;
      }
      List<TargetFeatures> shuffled = new ArrayList<>(fresh);
      Collections.shuffle(shuffled, new Random(seed ^ newVersion));
      rows.addAll(shuffled);
    } else {
      Set<String> landmarkIds = new HashSet<>();
      for (TargetFeatures l : landmarkTargets) {
        landmarkIds.add(l.id);
        rows.add(l);
      }
      for (TargetFeatures t : fresh) {
        if (!landmarkIds.contains(t.id)) {
          rows.add(t);
        }
      }
      if (rows.size() < 2 * landmarks) {
        return null;
      }
    }
    // rows: the d' landmarks first, then the other regression samples.
    List<Features> features = new ArrayList<>(rows.size());
    float[][] oldCache = new float[rows.size()][];
    for (int i = 0; i < rows.size(); i++) {
      features.add(Features.of(rows.get(i)));
      oldCache[i] = rows.get(i).cache;
    }
    float[][] newEncodings = encoder.encodeTargets(features);
    float[][] landmarkEncodings = java.util.Arrays.copyOf(newEncodings, landmarks);
    List<String> landmarkIds = new ArrayList<>(landmarks);
    for (int i = 0; i < landmarks; i++) {
      landmarkIds.add(rows.get(i).id);
    }
    ReEncodingRegression.Result fit =
        ReEncodingRegression.fit(oldCache, newEncodings, landmarkEncodings, RIDGE, EIGEN_FLOOR);
    int d = landmarks;
    requireFinite(fit.map().rowMajor(), "cache map");
    requireFinite(fit.projector().whitening(), "whitening");
    double[] cosine = heldOutCosine(oldCache, newEncodings, landmarkEncodings, landmarks);
    URI snapshot = ParameterSnapshots.write(encoder, snapshotBase, newVersion, seed);
    ModelUpdate update =
        ModelUpdate.newBuilder()
            .setVersion(newVersion)
            .setStep(step)
            .setSnapshotUri(snapshot.toString())
            .setLandmarkIds(landmarkIds)
            .setLandmarks(Matrices.of(fit.projector().landmarkEncodings()))
            .setProjection(Matrices.of(d, d, fit.projector().whitening()))
            .setMapKind(CacheMapKind.LINEAR)
            .setCacheMap(Matrices.of(d, d, fit.map().rowMajor()))
            .setRebuildLevel(null)
            .setDriftBound(null)
            .setReencodeExactly(landmarkTargets == null)
            .setCreatedMs(System.currentTimeMillis())
            .build();
    List<TargetFeatures> moved = new ArrayList<>(landmarks);
    List<TargetFeatures> exact = new ArrayList<>(landmarks);
    float[] scratch = new float[d];
    for (int i = 0; i < landmarks; i++) {
      TargetFeatures m = rows.get(i).withoutCache(0f);
      m.cache = oldCache[i].clone();
      fit.map().applyInPlace(m.cache, scratch);
      m.version = newVersion;
      moved.add(m);
      TargetFeatures e = rows.get(i).withoutCache(0f);
      e.cache = fit.projector().project(newEncodings[i]);
      e.version = newVersion;
      exact.add(e);
    }
    return new Outcome(update, cosine[0], cosine[1], moved, exact);
  }

  /**
   * {mean, min} cosine between {@code M old} and the fresh Nyström vector on the held-out samples
   * of a fit without them; {NaN, NaN} when holding out would leave fewer than 2 d' to fit.
   */
  static double[] heldOutCosine(
      float[][] oldCache, float[][] newEncodings, float[][] landmarkEncodings, int landmarks) {
    List<Integer> fitRows = new ArrayList<>();
    List<Integer> heldRows = new ArrayList<>();
    for (int i = 0; i < oldCache.length; i++) {
      (i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1 ? heldRows : fitRows).add(i);
    }
    if (heldRows.isEmpty() || fitRows.size() < 2 * landmarks) {
      return new double[] {Double.NaN, Double.NaN};
    }
    ReEncodingRegression.Result fit =
        ReEncodingRegression.fit(
            rows(oldCache, fitRows),
            rows(newEncodings, fitRows),
            landmarkEncodings,
            RIDGE,
            EIGEN_FLOOR);
    float[] scratch = new float[landmarks];
    double sum = 0;
    double min = Double.POSITIVE_INFINITY;
    for (int i : heldRows) {
      float[] moved = oldCache[i].clone();
      fit.map().applyInPlace(moved, scratch);
      double c = cosine(moved, fit.projector().project(newEncodings[i]));
      sum += c;
      min = Math.min(min, c);
    }
    return new double[] {sum / heldRows.size(), min};
  }

  private static float[][] rows(float[][] all, List<Integer> which) {
    float[][] out = new float[which.size()][];
    for (int i = 0; i < which.size(); i++) {
      out[i] = all[which.get(i)];
    }
    return out;
  }

  private static double cosine(float[] a, float[] b) {
    double dot = 0;
    double na = 0;
    double nb = 0;
    for (int i = 0; i < a.length; i++) {
      dot += (double) a[i] * b[i];
      na += (double) a[i] * a[i];
      nb += (double) b[i] * b[i];
    }
    return na == 0 || nb == 0 ? 0 : dot / Math.sqrt(na * nb);
  }

  /**
   * A non-finite fit must never reach the shards: the cycle fails here and the trainer retries
   * later.
   */
  private static void requireFinite(float[] values, String what) {
    for (float v : values) {
      if (!Float.isFinite(v)) {
        throw new IllegalStateException("the re-encoding fit produced a non-finite " + what);
      }
    }
  }
}
