package io.dynnibal.bench.cli;

import io.dynnibal.cli.DemoCommand;
import io.dynnibal.cli.TowerPresets;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * The experiment's job settings, as {@code key=value} defaults that a user's {@code --config} and
 * {@code --set} override; shared by the commands that take {@code --tower} ({@code experiment},
 * {@code bench pipeline}) and by {@code bench tower-reencode}'s sizes for the transformer.
 */
final class ExperimentSettings {
  private ExperimentSettings() {}

  /**
   * What every run shares: the demo's settings, with d' = 128 landmarks and s' = 360 regression
   * samples, so that DyNNIBAL's accelerator share (landmarks + regression data + map) stays under 1
   * % of the Debian corpus at full dimension (the paper used 256 samples on Zeshel), stochastic
   * negative mining at 10 % (ten times that), and a negative cache of 4,096 targets (6.4 %, the
   * paper's NQ setting). A re-encode cycle whose map's held-out cosine is below 0.9 re-encodes
   * exactly (the first few cycles, training from scratch). Two queries of every batch measure the
   * hard negatives' fidelity to exact mining (it slows the index-mining samplers by a
   * full-dimension encoding per model version).
   */
  static List<String> bag() {
    return DemoCommand.demoDefaults(
        List.of(
            "topic.prefix=dynnibal.",
            "landmarks=128",
            "regression.samples=360",
            "snm.pool.fraction=0.1",
            "negative.cache.size=4096",
            "reencode.exact.below=0.9",
            "fidelity.probes=2"));
  }

  /** The shared settings with the pretrained transformer's ({@link TowerPresets#transformer}). */
  static List<String> transformer() {
    List<String> all = new ArrayList<>(bag());
    all.addAll(TowerPresets.transformer());
    return all;
  }

  /**
   * The settings for {@code --tower} (bag or transformer); any other tower is a parameter error.
   */
  static List<String> forTower(String tower, CommandLine commandLine) {
    return switch (tower) {
      case "bag" -> bag();
      case "transformer" -> transformer();
      default ->
          throw new ParameterException(
              commandLine, "--tower is bag or transformer, not \"" + tower + "\"");
    };
  }
}
