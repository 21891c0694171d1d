package io.dynnibal.negatives;

import java.util.Arrays;
import java.util.List;

/**
 * Which targets the shards draw negatives from ({@code negatives.pool}): hard, uniform and SNM's
 * alike, and the fidelity probe's exact softmax with them.
 *
 * <ul>
 *   <li>{@code all}: every target of the corpus, as the paper's protocol indexes them;
 *   <li>{@code positives}: the targets a training pair has named as its positive so far; a target
 *       joins the index with the first batch that names it (or when it arrives, if its pair came
 *       first), and stays named when it is deleted and added again.
 * </ul>
 *
 * <p>Why {@code positives} exists: a target no training pair names only ever takes the negative's
 * side of the loss, so the features it does not share with labelled targets learn to score low
 * against every query. Where evaluation asks for targets no pair named (a held-out split by target,
 * cold-start items, zero-shot entity linking), that bias ranks exactly those targets down. The
 * negative cache and in-batch negatives never draw such targets, which is most of why they beat an
 * exhaustive oracle over all targets on the bundled corpora. Under {@code positives}, the index
 * samplers draw from the same population.
 */
public enum NegativesPool {
  ALL("all"),
  POSITIVES("positives");

  public final String id;

  NegativesPool(String id) {
    this.id = id;
  }

  public static final List<String> NAMES = Arrays.stream(values()).map(m -> m.id).toList();

  public static NegativesPool of(String id) {
    for (NegativesPool p : values()) {
      if (p.id.equals(id)) {
        return p;
      }
    }
    throw new IllegalArgumentException("unknown negatives pool \"" + id + "\"; one of " + NAMES);
  }

  @Override
  public String toString() {
    return id;
  }
}
