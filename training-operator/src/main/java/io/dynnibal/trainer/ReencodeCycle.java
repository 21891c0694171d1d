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
import java.util.List;
import java.util.Random;

/**
 * One approximate re-encoding (Alg. 4/5 of the paper) as the trainer runs it every w steps: encode
 * the reservoir's targets and d' landmarks (drawn from them) with the current target tower, fit the
 * ridge regression from their old cache vectors to the new encodings, write the parameter snapshot,
 * and describe it all in a {@link ModelUpdate}: the shards then move every cached vector by the d'
 * x d' map without re-encoding any target.
 */
final class ReencodeCycle {
  static final double RIDGE = 1e-3;
  static final double EIGEN_FLOOR = 1e-6;

  private ReencodeCycle() {}

  /**
   * @param fresh reservoir entries cached at the version being replaced (at least {@code
   *     landmarks})
   * @return the update, or null when there are too few fresh entries yet
   */
  static ModelUpdate build(
      DualEncoder encoder,
      List<TargetFeatures> fresh,
      int landmarks,
      long newVersion,
      long step,
      URI snapshotBase,
      long seed) {
    if (fresh.size() < 2 * landmarks) {
      return null;
    }
    List<Features> features = new ArrayList<>(fresh.size());
    float[][] oldCache = new float[fresh.size()][];
    for (int i = 0; i < fresh.size(); i++) {
      features.add(Features.of(fresh.get(i)));
      oldCache[i] = fresh.get(i).cache;
    }
    float[][] newEncodings = encoder.encodeTargets(features);
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < fresh.size(); i++) {
      order.add(i);
    }
    Collections.shuffle(order, new Random(seed ^ newVersion));
    float[][] landmarkEncodings = new float[landmarks][];
    List<String> landmarkIds = new ArrayList<>(landmarks);
    for (int i = 0; i < landmarks; i++) {
      landmarkEncodings[i] = newEncodings[order.get(i)];
      landmarkIds.add(fresh.get(order.get(i)).id);
    }
    ReEncodingRegression.Result fit =
        ReEncodingRegression.fit(oldCache, newEncodings, landmarkEncodings, RIDGE, EIGEN_FLOOR);
    int d = landmarks;
    requireFinite(fit.map().rowMajor(), "cache map");
    requireFinite(fit.projector().whitening(), "whitening");
    URI snapshot = ParameterSnapshots.write(encoder, snapshotBase, newVersion, seed);
    return ModelUpdate.newBuilder()
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
        .setCreatedMs(System.currentTimeMillis())
        .build();
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
