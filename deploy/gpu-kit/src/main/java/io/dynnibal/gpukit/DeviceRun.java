package io.dynnibal.gpukit;

import ai.djl.Device;
import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.TorchRuntime;
import io.dynnibal.model.features.Features;
import io.dynnibal.training.DualEncoderTrainer;
import io.dynnibal.training.StepResult;
import io.dynnibal.training.TrainerConfig;
import io.dynnibal.training.local.UniformBatches;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * One device's part of the smoke: the pretrained encoder on that device encodes the targets once
 * (the rate of exact re-encoding), then fine-tunes for {@code steps} steps on batches of random
 * training pairs with uniform negatives, the same batches on every device (one seed). Records the
 * loss of every step and the time of each after the warm-up.
 */
final class DeviceRun {
  /** What one device did. */
  record Result(Map<String, Object> figures, float[] losses) {}

  /** The smoke's shape: the same on every device. */
  record Plan(
      DualEncoderConfig model,
      List<TargetText> targets,
      List<LabelledQuery> train,
      int steps,
      int warmupSteps,
      int batch,
      int negatives,
      int encodeTargets,
      int threads,
      long seed) {
    Plan {
      if (steps < 1 || warmupSteps < 0 || batch < 1 || negatives < 0 || encodeTargets < 1) {
        throw new IllegalArgumentException(
            "--steps, --batch and --encode-targets take at least 1, --warmup and --negatives 0");
      }
    }
  }

  private DeviceRun() {}

  static Result run(Device device, Plan plan, PrintStream log) {
    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("device", device.toString());
    figures.put("intra_op_threads", plan.threads());
    int previousThreads = TorchRuntime.useIntraOpThreads(plan.threads());
    long memoryBefore = device.isGpu() ? GpuMemory.usedMebibytes() : -1;
    try (GpuMemory memory = device.isGpu() ? new GpuMemory(250) : null;
        DualEncoder encoder = DualEncoder.create(plan.model(), plan.seed(), device)) {
      List<Features> features = new ArrayList<>(plan.targets().size());
      Map<String, Integer> index = new HashMap<>();
      for (int i = 0; i < plan.targets().size(); i++) {
        features.add(encoder.featurizeTarget(plan.targets().get(i).text()));
        index.put(plan.targets().get(i).targetId(), i);
      }
      encoder.encodeTargets(features.subList(0, Math.min(64, features.size()))); // warm-up
      List<Features> encoded = features.subList(0, Math.min(plan.encodeTargets(), features.size()));
      long t0 = System.nanoTime();
      encoder.encodeTargets(encoded);
      double encodeSeconds = (System.nanoTime() - t0) / 1e9;
      figures.put("encoded_targets", encoded.size());
      figures.put("encode_texts_per_s", round(encoded.size() / encodeSeconds));
      log.printf("%s: encoded %,d targets in %.1f s%n", device, encoded.size(), encodeSeconds);

      DualEncoderTrainer trainer = new DualEncoderTrainer(encoder, TrainerConfig.fineTuning());
      Random random = new Random(plan.seed());
      int total = plan.warmupSteps() + plan.steps();
      float[] losses = new float[total];
      double[] millis = new double[plan.steps()];
      for (int s = 0; s < total; s++) {
        StepResult step =
            trainer.step(
                UniformBatches.draw(
                    plan.train(),
                    plan.targets(),
                    features,
                    index,
                    encoder,
                    plan.batch(),
                    plan.negatives(),
                    random));
        losses[s] = step.loss();
        if (s >= plan.warmupSteps()) {
          millis[s - plan.warmupSteps()] = step.millis();
        }
        if ((s + 1) % 50 == 0 || s + 1 == total) {
          log.printf("%s: step %d/%d, loss %.4f%n", device, s + 1, total, step.loss());
        }
      }
      double timed = Arrays.stream(millis).sum();
      Arrays.sort(millis);
      figures.put("steps", total);
      figures.put("timed_steps", plan.steps());
      figures.put("steps_per_s", round(plan.steps() / (timed / 1000)));
      figures.put("step_ms_p50", round(millis[millis.length / 2]));
      figures.put("first_loss", losses[0]);
      figures.put("last_loss", losses[total - 1]);
      if (memory != null) {
        figures.put("gpu_memory_before_mib", memoryBefore);
        figures.put("gpu_memory_peak_mib", memory.peakMebibytes());
      }
      return new Result(figures, losses);
    } finally {
      TorchRuntime.useIntraOpThreads(previousThreads);
    }
  }

  private static double round(double v) {
    return Math.round(v * 1000) / 1000.0;
  }
}
