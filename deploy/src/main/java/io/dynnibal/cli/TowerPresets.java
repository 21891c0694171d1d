package io.dynnibal.cli;

import java.util.List;

/**
 * Job settings that go with a tower, as {@code key=value} defaults a user's {@code --config} and
 * {@code --set} override: shared by the demo and the experiment.
 */
public final class TowerPresets {
  private TowerPresets() {}

  /**
   * The pretrained transformer (MiniLM-L6, d = 384), sized for two CPU cores:
   *
   * <ul>
   *   <li>32 tokens per target and 16 per query: a target's name and first sentence or two; the
   *       cost of encoding the whole corpus (indexing, evaluation) grows with the length;
   *   <li>the fast path: the top two layers fine-tune, the four below them and the embeddings stay
   *       as pretrained and their output per text is cached (up to 8 GiB, half precision, outside
   *       the heap), and a step's texts run in four length groups;
   *   <li>a rate of 2e-4 with 15 warm-up steps (two layers learn faster than the whole encoder
   *       would at its usual 5e-5) and batches of 32 with 32 uniform negatives;
   *   <li>d' = 256 landmarks of d = 384, s' = 544 regression samples, a cycle every 50 steps; only
   *       the first, which draws the landmarks, re-encodes the corpus exactly, the others move the
   *       cache by their map whatever its held-out cosine. A pretrained encoder's space is not the
   *       low-rank one a tower trained from scratch learns: the Nyström cache needs most of its
   *       dimensions for MH's draws to follow the softmax (docs/findings.md);
   *   <li>no fidelity probes (each encodes every target at full dimension per model version);
   *   <li>the candidates counted as drawn ({@code negatives.correction=none}).
   * </ul>
   */
  public static List<String> transformer() {
    return List.of(
        "model.tower=transformer",
        "model.output.dim=384",
        "model.max.tokens=32",
        "model.query.max.tokens=16",
        "model.trainable.layers=2",
        "model.frozen.cache.mb=8192",
        "model.length.buckets=4",
        "learning.rate=2e-4",
        "warmup.steps=15",
        "batch.size=32",
        "negatives.uniform=32",
        "landmarks=256",
        "regression.samples=544",
        "reencode.every=50",
        "reencode.exact.below=0",
        "fidelity.probes=0",
        "negatives.correction=none");
  }
}
