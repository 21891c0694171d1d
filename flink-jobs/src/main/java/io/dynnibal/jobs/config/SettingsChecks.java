package io.dynnibal.jobs.config;

import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.negatives.NegativesPool;
import io.dynnibal.training.SamplingCorrection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What a configuration must satisfy: each setting's own bounds (from its declaration), then what
 * settings need of each other, every problem named in the settings' keys.
 */
final class SettingsChecks {
  private SettingsChecks() {}

  /** Every problem, or an empty list: each setting's bounds, then what settings need together. */
  static List<String> problems(TrainingJobConfig c) {
    List<String> p = new ArrayList<>();
    for (SettingsTable.Entry e : SettingsTable.ENTRIES) {
      String problem = e.problem(c);
      if (problem != null) {
        p.add(problem);
      }
    }
    IndexSettings index = c.index;
    if (index.landmarks > c.model.modelOutputDim) {
      p.add(
          "landmarks (d' = "
              + index.landmarks
              + ") must not exceed the encoder's output dimension "
              + c.model.modelOutputDim);
    }
    if (c.reencode.regressionSamples < 2 * index.landmarks) {
      p.add(
          "regression.samples (s' = "
              + c.reencode.regressionSamples
              + ") must be at least twice landmarks ("
              + index.landmarks
              + "): a re-encode cycle fits d' landmarks and a d' x d' map from s' samples");
    }
    try {
      Duration transaction = c.transactionTimeout();
      JobSettings job = c.job;
      if (job.checkpointTimeout != null
          && job.checkpointInterval != null
          && transaction.compareTo(job.checkpointTimeout.plus(job.checkpointInterval)) <= 0) {
        p.add(
            "kafka.transaction.timeout.ms ("
                + transaction.toMillis()
                + ") must exceed checkpoint.timeout plus checkpoint.interval ("
                + job.checkpointTimeout.plus(job.checkpointInterval).toMillis()
                + " ms): the broker aborts a transaction that outlives it, and what a slower"
                + " checkpoint's transaction held would be lost");
      }
    } catch (IllegalArgumentException e) {
      p.add(e.getMessage());
    }
    p.addAll(SecretReferences.problems(c.kafka.kafkaProperties));
    if (c.sampler.problem() != null) {
      p.add(c.sampler.problem());
    }
    NegativesSettings n = c.negatives;
    if (!NegativesMode.NAMES.contains(n.negativesMode)) {
      p.add("negatives.mode must be one of " + NegativesMode.NAMES + ", got " + n.negativesMode);
    }
    if (!SamplingCorrection.Mode.NAMES.contains(n.negativesCorrection)) {
      p.add(
          "negatives.correction must be one of "
              + SamplingCorrection.Mode.NAMES
              + ", got "
              + n.negativesCorrection);
    }
    if (!NegativesPool.NAMES.contains(n.negativesPool)) {
      p.add("negatives.pool must be one of " + NegativesPool.NAMES + ", got " + n.negativesPool);
    } else if (n.negativesUnnamedShare > 0 && c.negativesPool() != NegativesPool.POSITIVES) {
      p.add(
          "negatives.unnamed.share applies to negatives.pool=positives (under all every target is"
              + " in the pool); got pool "
              + n.negativesPool);
    }
    if (n.negativesUniform < 1
        && (c.sampler.problem() != null || c.sampler().publishesModelUpdates())) {
      p.add(
          "negatives.uniform must be at least 1 (except for in-batch): uniform negatives are the"
              + " re-encoding regression's data, and model updates are how the shards get new"
              + " parameters");
    }
    c.model.problems(p);
    return p;
  }
}
