package io.dynnibal.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.FeatureConfig;
import io.dynnibal.model.features.Features;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.state.TargetFeatures;
import io.dynnibal.stream.MergedBatch;
import io.dynnibal.stream.QueryBatch;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The trainer's re-scoring against the exact softmax of its current model over the candidates. */
class CandidateRescoringTest {
  private static final DualEncoderConfig SMALL =
      new DualEncoderConfig(new FeatureConfig(1 << 12, 32, 8, 3, 4), 16, 32, 16, true, 3f);
  private static final String[] TEXTS = {
    "audio player for the desktop",
    "video editor",
    "audio codec library",
    "kernel module tools",
    "font for the terminal",
    "game of chess"
  };

  private static MergedBatch batch(DualEncoder encoder, long id) {
    MergedBatch merged = new MergedBatch();
    merged.batch = new QueryBatch();
    merged.batch.batchId = id;
    merged.batch.pairIds = new String[] {"p0"};
    merged.batch.queryTexts = new String[] {"audio"};
    merged.batch.targetIds = new String[] {"t0"};
    merged.candidates = new TargetFeatures[TEXTS.length];
    merged.candidateQuery = new int[TEXTS.length];
    for (int i = 0; i < TEXTS.length; i++) {
      Features f = encoder.featurizeTarget(TEXTS[i]);
      // t0 is the batch's positive: never a shared negative.
      merged.candidates[i] = new TargetFeatures("t" + i, f.ids(), f.weights(), null);
    }
    return merged;
  }

  /** The exact softmax over the candidates but the positive (t0), by the current model. */
  private static double[] softmax(DualEncoder encoder, MergedBatch merged) {
    float[] q = encoder.encodeQueryTexts(List.of("audio"))[0];
    float[][] t = encoder.encodeTargetTexts(List.of(TEXTS));
    double[] p = new double[TEXTS.length];
    double sum = 0;
    for (int i = 1; i < TEXTS.length; i++) {
      p[i] = Math.exp(encoder.score(q, t[i]));
      sum += p[i];
    }
    for (int i = 0; i < p.length; i++) {
      p[i] /= sum;
    }
    return p;
  }

  @Test
  void topKModeTakesTheCandidateTheCurrentModelScoresHighest() {
    try (DualEncoder encoder = DualEncoder.create(SMALL, 3)) {
      MergedBatch merged = batch(encoder, 1);
      double[] p = softmax(encoder, merged);
      int best = 1;
      for (int i = 1; i < p.length; i++) {
        best = p[i] > p[best] ? i : best;
      }
      List<TargetFeatures> chosen =
          CandidateRescoring.draw(encoder, merged, 1, NegativesMode.TOP_K, 1, 5);
      assertEquals(List.of("t" + best), chosen.stream().map(t -> t.id).toList());
    }
  }

  @Test
  void sampleModeDrawsFromTheSoftmaxOfTheCurrentModel() {
    try (DualEncoder encoder = DualEncoder.create(SMALL, 4)) {
      double[] p = softmax(encoder, batch(encoder, 0));
      int draws = 6_000;
      int[] counts = new int[TEXTS.length];
      for (long id = 0; id < draws; id++) {
        for (TargetFeatures t :
            CandidateRescoring.draw(encoder, batch(encoder, id), 1, NegativesMode.SAMPLE, 1, 6)) {
          counts[Integer.parseInt(t.id.substring(1))]++;
        }
      }
      assertEquals(0, counts[0], "the batch's positive is never a negative");
      double chi = 0;
      int bins = 0;
      for (int i = 1; i < p.length; i++) {
        double expected = p[i] * draws;
        if (expected >= 5) {
          chi += (counts[i] - expected) * (counts[i] - expected) / expected;
          bins++;
        }
      }
      // 0.999 quantile of chi-square with at most 4 degrees of freedom: 18.5.
      assertTrue(bins >= 2, "a degenerate softmax: " + java.util.Arrays.toString(p));
      assertTrue(chi < 18.5, "chi-square " + chi + " " + java.util.Arrays.toString(counts));
    }
  }
}
