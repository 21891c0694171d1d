package io.dynnibal.tests.training;

import io.dynnibal.jobs.config.TrainingJobConfig;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * What the smoke runs of the CLI's local commands share: a tiny bag tower, batches of 16 with
 * DyNNIBAL-MH negatives and a model update every 5 steps, fast checkpoints (their work directories:
 * {@link io.dynnibal.tests.harness.WorkDirs#fresh}).
 */
public final class SmokeRuns {
  private SmokeRuns() {}

  /** The smoke settings under topic prefix and group {@code name}, then {@code extra} on top. */
  public static TrainingJobConfig config(String name, String... extra) throws IOException {
    List<String> settings =
        new ArrayList<>(
            List.of(
                "topic.prefix=" + name + ".",
                "group.id=" + name,
                "batch.size=16",
                "negatives.per.example=1",
                "negatives.uniform=8",
                "reencode.every=5",
                "landmarks=16",
                "regression.samples=64",
                "model.buckets=4096",
                "model.embedding.dim=32",
                "model.hidden.dim=64",
                "model.output.dim=32",
                "warmup.steps=5",
                "checkpoint.interval=500ms"));
    settings.addAll(List.of(extra));
    return TrainingJobConfig.load(null, settings);
  }
}
