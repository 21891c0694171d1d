package io.dynnibal.sampler;

/**
 * What each kind of mining holds at full dimension in one step's accounting, for {@link
 * Sampler#miningFloats} to choose from.
 *
 * @param shardPools floats all shards hold in full-dimension pools (brute-force mining)
 * @param trainerNegatives floats the trainer's own negative source holds (0 without one)
 * @param reencodingMap floats of DyNNIBAL's re-encoding: d' landmarks and s' regression samples at
 *     dimension d, and the d' x d' map (its Nystrom index is CPU memory in the shards)
 */
public record MiningFloats(long shardPools, long trainerNegatives, long reencodingMap) {

  /** The re-encoding's floats for d' landmarks, s' regression samples and embeddings of size d. */
  public static long reencodingMap(int landmarks, int regressionSamples, int outputDim) {
    return (long) (landmarks + regressionSamples) * outputDim + (long) landmarks * landmarks;
  }
}
