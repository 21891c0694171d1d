package io.dynnibal.negatives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The fidelity figures computed from shard summaries against the same figures computed by brute
 * force over every logit of one softmax.
 */
class SoftmaxFidelityTest {
  private static final int TARGETS = 3_000;
  private static final int SHARDS = 3;
  private static final int K = 8;

  private final SplittableRandom random = new SplittableRandom(11);
  private final float[] logits = new float[TARGETS];
  private final List<String> ids = new ArrayList<>();

  SoftmaxFidelityTest() {
    for (int i = 0; i < TARGETS; i++) {
      // Scores like beta = 20 times cosines: a few targets far above the bulk.
      logits[i] = (float) (20 * Math.tanh(0.25 * random.nextGaussian() + 0.1));
      ids.add("t" + i);
    }
  }

  /**
   * The parts of shards holding targets i with i % SHARDS == s, target {@code positive} left out.
   */
  private List<SoftmaxFidelity.Part> parts(int positive, int top) {
    List<SoftmaxFidelity.Part> parts = new ArrayList<>();
    for (int s = 0; s < SHARDS; s++) {
      List<String> shardIds = new ArrayList<>();
      List<Float> shardLogits = new ArrayList<>();
      int excluded = -1;
      for (int i = s; i < TARGETS; i += SHARDS) {
        if (i == positive) {
          excluded = shardIds.size();
        }
        shardIds.add(ids.get(i));
        shardLogits.add(logits[i]);
      }
      float[] l = new float[shardLogits.size()];
      for (int i = 0; i < l.length; i++) {
        l[i] = shardLogits.get(i);
      }
      parts.add(SoftmaxFidelity.Part.of(shardIds, l, excluded, top));
    }
    return parts;
  }

  private int[] byLogit(int positive) {
    return IntStream.range(0, TARGETS)
        .filter(i -> i != positive)
        .boxed()
        .sorted(
            Comparator.comparingDouble((Integer i) -> -logits[i]).thenComparing(i -> ids.get(i)))
        .mapToInt(Integer::intValue)
        .toArray();
  }

  private double logZ(int positive) {
    double max = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < TARGETS; i++) {
      max = i == positive ? max : Math.max(max, logits[i]);
    }
    double sum = 0;
    for (int i = 0; i < TARGETS; i++) {
      sum += i == positive ? 0 : Math.exp(logits[i] - max);
    }
    return max + Math.log(sum);
  }

  private float[] logitsOf(int[] picks) {
    float[] out = new float[picks.length];
    for (int i = 0; i < picks.length; i++) {
      out[i] = logits[picks[i]];
    }
    return out;
  }

  private List<String> idsOf(int[] picks) {
    return Arrays.stream(picks).mapToObj(ids::get).toList();
  }

  @Test
  void exactTopKPicksScoreOneInTopKMode() {
    int positive = byLogit(-1)[0]; // the best target is the positive: the next K are the top-k
    int[] top = Arrays.copyOf(byLogit(positive), K);
    SoftmaxFidelity.Figures f =
        SoftmaxFidelity.measure(
            parts(positive, K), idsOf(top), logitsOf(top), K, NegativesMode.TOP_K);
    assertEquals(1.0, f.overlapTopk(), 1e-9);
    assertEquals(1.0, f.logitRatio(), 1e-6);
    assertEquals(1.0, f.massRatio(), 1e-6);
  }

  @Test
  void topKFiguresEqualBruteForceForOtherPicks() {
    int positive = 5;
    int[] order = byLogit(positive);
    // Half of the top-k, then targets far down the ranking, one of them twice.
    int[] picks = {order[0], order[2], order[4], order[6], order[500], order[900], order[900]};
    double logZ = logZ(positive);
    double topMean = 0;
    double topMass = 0;
    for (int r = 0; r < K; r++) {
      topMean += logits[order[r]] / (double) K;
      topMass += Math.exp(logits[order[r]] - logZ);
    }
    double pickMean = 0;
    for (int p : picks) {
      pickMean += logits[p] / (double) picks.length;
    }
    double pickMass = 0;
    for (int p : new HashSet<>(Arrays.stream(picks).boxed().toList())) {
      pickMass += Math.exp(logits[p] - logZ);
    }
    SoftmaxFidelity.Figures f =
        SoftmaxFidelity.measure(
            parts(positive, K), idsOf(picks), logitsOf(picks), K, NegativesMode.TOP_K);
    assertEquals(4.0 / K, f.overlapTopk(), 1e-9);
    assertEquals(pickMean / topMean, f.logitRatio(), 1e-5);
    assertEquals(pickMass / topMass, f.massRatio(), 1e-5);
  }

  @Test
  void sampleModeFiguresEqualTheExactExpectationsOfSoftmaxDraws() {
    int positive = 17;
    double logZ = logZ(positive);
    double expectedLogit = 0;
    double expectedMass = 0;
    for (int i = 0; i < TARGETS; i++) {
      if (i != positive) {
        double p = Math.exp(logits[i] - logZ);
        expectedLogit += p * logits[i];
        expectedMass += p * (1 - Math.pow(1 - p, K));
      }
    }
    int[] picks = Arrays.copyOf(byLogit(positive), 3);
    double pickMean = (logits[picks[0]] + logits[picks[1]] + logits[picks[2]]) / 3.0;
    double pickMass = 0;
    for (int p : picks) {
      pickMass += Math.exp(logits[p] - logZ);
    }
    // Parts listing only 16 targets each: the rest of the expected mass is first-order.
    SoftmaxFidelity.Figures f =
        SoftmaxFidelity.measure(
            parts(positive, 16), idsOf(picks), logitsOf(picks), K, NegativesMode.SAMPLE);
    assertEquals(pickMean / expectedLogit, f.logitRatio(), 1e-5);
    assertEquals(pickMass / expectedMass, f.massRatio(), 1e-3 * pickMass / expectedMass);
    assertTrue(Double.isNaN(f.normaliserError()), "no estimate given, none judged");
    SoftmaxFidelity.Figures judged =
        SoftmaxFidelity.measure(
            parts(positive, 16),
            idsOf(picks),
            logitsOf(picks),
            K,
            NegativesMode.SAMPLE,
            logZ - 0.5);
    assertEquals(-0.5, judged.normaliserError(), 1e-9, "an estimate half a nat low");
    assertEquals(f.massRatio(), judged.massRatio());
  }

  @Test
  void exactSoftmaxDrawsHaveFiguresNearOneInSampleMode() {
    // Averaged over many sets of K exact draws, the picks' mean logit and distinct mass match the
    // expectations the figures divide by.
    int positive = 17;
    double logZ = logZ(positive);
    double[] cumulative = new double[TARGETS];
    double total = 0;
    for (int i = 0; i < TARGETS; i++) {
      total += i == positive ? 0 : Math.exp(logits[i] - logZ);
      cumulative[i] = total;
    }
    List<SoftmaxFidelity.Part> parts = parts(positive, 32);
    double logitRatio = 0;
    double massRatio = 0;
    int sets = 4_000;
    for (int s = 0; s < sets; s++) {
      int[] picks = new int[K];
      for (int j = 0; j < K; j++) {
        int at = Arrays.binarySearch(cumulative, random.nextDouble() * total);
        picks[j] = Math.min(TARGETS - 1, at >= 0 ? at + 1 : -at - 1);
      }
      SoftmaxFidelity.Figures f =
          SoftmaxFidelity.measure(parts, idsOf(picks), logitsOf(picks), K, NegativesMode.SAMPLE);
      logitRatio += f.logitRatio() / sets;
      massRatio += f.massRatio() / sets;
    }
    assertEquals(1.0, logitRatio, 0.01);
    assertEquals(1.0, massRatio, 0.03);
  }

  @Test
  void unknownPickLogitsAreLeftOutAndNoPicksGiveNaN() {
    int[] order = byLogit(-1);
    int[] picks = {order[0], order[1]};
    float[] known = logitsOf(picks);
    float[] oneUnknown = {known[0], Float.NaN};
    SoftmaxFidelity.Figures f =
        SoftmaxFidelity.measure(parts(-1, K), idsOf(picks), oneUnknown, K, NegativesMode.TOP_K);
    assertEquals(1.0 / K, f.overlapTopk(), 1e-9);
    SoftmaxFidelity.Figures none =
        SoftmaxFidelity.measure(parts(-1, K), List.of(), new float[0], K, NegativesMode.TOP_K);
    assertTrue(Double.isNaN(none.massRatio()));
    Set<String> listed = new HashSet<>();
    for (SoftmaxFidelity.Part p : parts(-1, K)) {
      listed.addAll(Arrays.asList(p.topIds));
    }
    assertEquals(SHARDS * K, listed.size());
  }
}
