package io.dynnibal.gpukit;

import ai.djl.Device;
import ai.djl.engine.Engine;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.dynnibal.data.JsonlCorpus;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.TorchRuntime;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The kit's smoke: the same transformer fine-tuning (the kit's checkpoint, batches of random pairs
 * plus uniform negatives, one seed) on each device asked for, in one process, then whether the loss
 * curves agree ({@link LossAgreement}) and what each device did: steps/s, the exact re-encoding
 * rate, GPU memory. One JSON object, on stdout and in {@code --out}.
 *
 * <pre>
 * GpuSmoke --kit DIR [--devices gpu,cpu] [--steps 300] [--warmup 20] [--batch 32]
 *          [--negatives 64] [--max-tokens 32] [--encode-targets all] [--threads N] [--seed 7]
 *          [--out FILE]
 *          [--reference FILE]   compare the first device with another run's JSON (its first device)
 * </pre>
 *
 * A device that is asked for and missing fails the run: a GPU smoke that quietly trains on the CPU
 * would report nothing true.
 */
public final class GpuSmoke {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private GpuSmoke() {}

  public static void main(String[] args) throws IOException {
    Map<String, String> a = Arguments.parse(args);
    Path kit = Path.of(Arguments.required(a, "kit"));
    int maxTokens = Integer.parseInt(a.getOrDefault("max-tokens", "32"));
    DeviceRun.Plan plan =
        new DeviceRun.Plan(
            DualEncoderConfig.transformer(
                kit.resolve("model").toString(), 0, maxTokens, 0, 0, true, 20f),
            JsonlCorpus.readTargets(kit.resolve("data/targets.jsonl")),
            JsonlCorpus.readQueries(kit.resolve("data/train.jsonl")),
            Integer.parseInt(a.getOrDefault("steps", "300")),
            Integer.parseInt(a.getOrDefault("warmup", "20")),
            Integer.parseInt(a.getOrDefault("batch", "32")),
            Integer.parseInt(a.getOrDefault("negatives", "64")),
            Integer.parseInt(a.getOrDefault("encode-targets", String.valueOf(Integer.MAX_VALUE))),
            Integer.parseInt(
                a.getOrDefault(
                    "threads", String.valueOf(Runtime.getRuntime().availableProcessors()))),
            Long.parseLong(a.getOrDefault("seed", "7")));

    Engine engine = TorchRuntime.engine();
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("djl", Engine.getDjlVersion());
    report.put("libtorch", engine.getVersion());
    report.put("libtorch_dir", libtorchDir());
    report.put("cuda_available", TorchRuntime.cudaAvailable());
    report.put("gpus_counted_by_djl", engine.getGpuCount());
    report.put("gpu", GpuMemory.name());
    report.put("checkpoint", plan.model().checkpoint());
    report.put("targets", plan.targets().size());
    report.put("training_pairs", plan.train().size());
    report.put("batch", plan.batch());
    report.put("negatives_per_step", plan.negatives());
    report.put("max_tokens", maxTokens);
    report.put("seed", plan.seed());

    List<String> names = List.of(a.getOrDefault("devices", "gpu,cpu").split(","));
    List<DeviceRun.Result> results = new ArrayList<>();
    Map<String, Object> devices = new LinkedHashMap<>();
    for (String name : names) {
      DeviceRun.Result r = DeviceRun.run(device(name, engine), plan, System.err);
      results.add(r);
      Map<String, Object> row = new LinkedHashMap<>(r.figures());
      row.put("losses", r.losses());
      devices.put(name, row);
    }
    report.put("runs", devices);
    if (results.size() > 1) {
      report.put(
          "agreement_" + names.get(0) + "_" + names.get(1),
          LossAgreement.DEFAULT.compare(results.get(0).losses(), results.get(1).losses()));
      report.put(
          names.get(0) + "_speedup_over_" + names.get(1),
          ratio(results.get(0), results.get(1), "steps_per_s"));
      report.put(
          names.get(0) + "_encode_speedup_over_" + names.get(1),
          ratio(results.get(0), results.get(1), "encode_texts_per_s"));
    }
    if (a.containsKey("reference")) {
      JsonNode reference = JSON.readTree(Path.of(a.get("reference")).toFile());
      JsonNode firstRun = reference.path("runs").elements().next();
      float[] losses = new float[firstRun.path("losses").size()];
      for (int i = 0; i < losses.length; i++) {
        losses[i] = (float) firstRun.path("losses").get(i).asDouble();
      }
      Map<String, Object> agreement =
          LossAgreement.DEFAULT.compare(losses, results.get(0).losses());
      agreement.put("reference_libtorch", reference.path("libtorch").asText());
      report.put("agreement_with_reference", agreement);
    }
    String text = JSON.writeValueAsString(report);
    System.out.println(text);
    if (a.containsKey("out")) {
      Files.writeString(Path.of(a.get("out")), text + "\n");
    }
  }

  private static Device device(String name, Engine engine) {
    switch (name) {
      case "cpu":
        return Device.cpu();
      case "gpu":
        if (!TorchRuntime.cudaAvailable()) {
          throw new IllegalStateException(
              "--devices names gpu, but libtorch "
                  + engine.getVersion()
                  + " sees no GPU (a CPU-only libtorch, or no driver for its CUDA version)");
        }
        return Device.gpu();
      default:
        throw new IllegalArgumentException("--devices takes gpu and cpu, not " + name);
    }
  }

  private static String libtorchDir() {
    try {
      return ai.djl.pytorch.jni.LibUtils.getLibtorchPath();
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static double ratio(DeviceRun.Result a, DeviceRun.Result b, String figure) {
    double x = ((Number) a.figures().get(figure)).doubleValue();
    double y = ((Number) b.figures().get(figure)).doubleValue();
    return Math.round(x / y * 100) / 100.0;
  }
}
