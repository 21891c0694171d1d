package io.dynnibal.jobs.shard;

import ai.djl.Device;
import io.dynnibal.index.nystrom.NystromProjector;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.Features;
import io.dynnibal.schemas.Matrices;
import io.dynnibal.schemas.ModelUpdate;
import io.dynnibal.snapshot.ParameterSnapshots;
import java.net.URI;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The model a shard encodes with at one version: the encoder (from the version's parameter
 * snapshot) and the Nyström projection (from the version's landmarks and whitening, exactly as the
 * trainer fitted them). Version 0 needs no update: every operator derives the same initial encoder
 * from the configured seed, and projects through random landmarks (a Nyström map over random
 * directions is a random projection) until the trainer picks real ones.
 */
final class ShardModel implements AutoCloseable {
  final long version;
  final long step;
  final DualEncoder encoder;
  final NystromProjector projector;

  /** The encoder's name among the JVM's {@link SharedEncoders}. */
  private final String encoderKey;

  private boolean closed;

  private ShardModel(
      long version, long step, String encoderKey, DualEncoder encoder, NystromProjector projector) {
    this.version = version;
    this.step = step;
    this.encoderKey = encoderKey;
    this.encoder = encoder;
    this.projector = projector;
  }

  static ShardModel initial(ShardSettings settings) {
    String key = "initial " + settings.seed() + " " + settings.model();
    return new ShardModel(
        0,
        0,
        key,
        SharedEncoders.acquire(
            key, () -> DualEncoder.create(settings.model(), settings.seed(), Device.cpu())),
        initialProjector(settings));
  }

  /**
   * The model of {@code update}, whose snapshot's manifest must describe a model of {@code
   * expected}'s shape: a snapshot of another model is refused before its parameters are read.
   */
  static ShardModel of(ModelUpdate update, DualEncoderConfig expected) {
    URI snapshot = URI.create(update.getSnapshotUri());
    String differs =
        ModelShape.difference(expected, ParameterSnapshots.manifest(snapshot).config());
    if (differs != null) {
      throw new IllegalArgumentException(
          "its snapshot " + snapshot + " is of another model than this job's: " + differs);
    }
    float[][] landmarks =
        Matrices.rows(update.getLandmarks(), "landmarks of model update " + update.getVersion());
    float[] whitening =
        Matrices.values(
            update.getProjection(), "projection of model update " + update.getVersion());
    NystromProjector projector = NystromProjector.fromParts(landmarks, whitening, landmarks.length);
    String key = update.getSnapshotUri();
    DualEncoder encoder =
        SharedEncoders.acquire(key, () -> ParameterSnapshots.readEncoder(snapshot, Device.cpu()));
    return new ShardModel(update.getVersion(), update.getStep(), key, encoder, projector);
  }

  /**
   * Random unit landmark directions from the seed: the version-0 projection, the same in every
   * operator.
   */
  static NystromProjector initialProjector(ShardSettings settings) {
    SplittableRandom random = new SplittableRandom(settings.seed() ^ 0x1A2B3C4DL);
    float[][] landmarks = new float[settings.landmarks()][settings.model().outputDim()];
    for (float[] row : landmarks) {
      double norm = 0;
      for (int j = 0; j < row.length; j++) {
        double u = random.nextDouble();
        double v = random.nextDouble();
        row[j] = (float) (Math.sqrt(-2 * Math.log(1 - u)) * Math.cos(2 * Math.PI * v));
        norm += row[j] * row[j];
      }
      for (int j = 0; j < row.length; j++) {
        row[j] /= (float) Math.sqrt(norm);
      }
    }
    return NystromProjector.fit(landmarks, 1e-6);
  }

  /**
   * Cache vectors of many targets with one forward pass (one DJL call per target costs far more
   * than the math).
   */
  float[][] targetCaches(List<Features> features) {
    float[][] encoded = encoder.encodeTargets(features);
    float[][] out = new float[encoded.length][];
    for (int i = 0; i < encoded.length; i++) {
      out[i] = projector.project(encoded[i]);
    }
    return out;
  }

  float[][] queryCaches(List<Features> queries) {
    float[][] encoded = encoder.encodeQueries(queries);
    float[][] out = new float[encoded.length][];
    for (int i = 0; i < encoded.length; i++) {
      out[i] = projector.project(encoded[i]);
    }
    return out;
  }

  /** Lets go of the encoder (once, however often it is called). */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      SharedEncoders.release(encoderKey);
    }
  }
}
