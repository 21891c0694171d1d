package io.dynnibal.bench.experiment;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.dynnibal.eval.RetrievalMetrics;
import io.dynnibal.sampler.Exhaustive;
import io.dynnibal.sampler.Uniform;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * An experiment's figures as a table, as JSON (the shape other tools read) and as a
 * recall-versus-step chart.
 */
public final class ExperimentReport {
  private ExperimentReport() {}

  private static final String[] COLUMNS = {
    "Mem %", "R@1", "R@5", "R@10", "R@20", "R@100", "MRR@10", "steps/s", "wall s"
  };

  /**
   * One row per run, then (with several seeds) one mean row per sampler, in the order the samplers
   * ran; and the share of the R@1 gap between uniform and exhaustive negatives that each sampler
   * closes, where both ran.
   */
  public static String table(Experiment.Result result) {
    List<Experiment.Run> runs = result.runs();
    Map<String, List<Experiment.Run>> bySampler = bySampler(runs);
    boolean severalSeeds = bySampler.values().stream().anyMatch(l -> l.size() > 1);
    int width = Math.max(18, runs.stream().mapToInt(r -> r.sampler().length() + 8).max().orElse(0));
    StringBuilder out = new StringBuilder(String.format("%-" + width + "s", "sampler"));
    for (String c : COLUMNS) {
      out.append(String.format("  %7s", c));
    }
    out.append('\n');
    for (Experiment.Run r : runs) {
      row(out, width, r.sampler() + " s" + r.seed(), values(r));
    }
    if (severalSeeds) {
      out.append("mean over seeds\n");
      bySampler.forEach((sampler, list) -> row(out, width, sampler, mean(list)));
      out.append("standard deviation over seeds (a difference of means below it is a tie)\n");
      bySampler.forEach((sampler, list) -> row(out, width, sampler, std(list)));
    }
    if (result.bm25() != null) {
      row(
          out,
          width,
          "bm25 (no training)",
          values(result.bm25(), Double.NaN, Double.NaN, Double.NaN));
    }
    Map<String, Double> closed = gapClosed(runs);
    if (!closed.isEmpty()) {
      out.append("share of the R@1 gap uniform -> exhaustive closed (mean over seeds):");
      closed.forEach(
          (sampler, share) -> out.append(String.format(" %s %.0f%%;", sampler, 100 * share)));
      out.append('\n');
    }
    fidelity(out, bySampler);
    return out.toString();
  }

  /**
   * Per sampler whose runs measured it, the fidelity to exact mining: mean ± std over runs of each
   * run's average.
   */
  private static void fidelity(StringBuilder out, Map<String, List<Experiment.Run>> bySampler) {
    bySampler.forEach(
        (sampler, runs) -> {
          if (runs.stream().allMatch(r -> r.fidelity().isEmpty())) {
            return;
          }
          out.append("fidelity to exact mining, ").append(sampler).append(':');
          for (String f : io.dynnibal.negatives.SoftmaxFidelity.NAMES) {
            double[] v =
                runs.stream()
                    .mapToDouble(r -> r.fidelity().getOrDefault(f, Double.NaN))
                    .filter(x -> !Double.isNaN(x))
                    .toArray();
            double mean = java.util.Arrays.stream(v).average().orElse(Double.NaN);
            double var = 0;
            for (double x : v) {
              var += (x - mean) * (x - mean);
            }
            double std = v.length < 2 ? 0 : Math.sqrt(var / (v.length - 1));
            out.append(String.format(" %s %.3f ± %.3f;", f, mean, std));
          }
          out.append('\n');
        });
  }

  /**
   * Mean R@1 (sampler - uniform) / (exhaustive - uniform), for every sampler, when uniform and
   * exhaustive ran.
   */
  public static Map<String, Double> gapClosed(List<Experiment.Run> runs) {
    Map<String, List<Experiment.Run>> bySampler = bySampler(runs);
    Map<String, Double> out = new LinkedHashMap<>();
    if (!bySampler.containsKey(Uniform.ID) || !bySampler.containsKey(Exhaustive.ID)) {
      return out;
    }
    double uniform = mean(bySampler.get(Uniform.ID))[1];
    double exhaustive = mean(bySampler.get(Exhaustive.ID))[1];
    if (exhaustive == uniform) {
      return out;
    }
    bySampler.forEach(
        (sampler, list) -> out.put(sampler, (mean(list)[1] - uniform) / (exhaustive - uniform)));
    return out;
  }

  /**
   * {@code {"dataset": {...}, "config": {...}, "samplers": [{"name", "seed", "mem_percent",
   * "recall", ...}]}}.
   */
  public static void writeJson(Experiment.Result result, Path file) throws IOException {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("dataset", result.dataset());
    json.put("config", result.config());
    List<Map<String, Object>> samplers = new ArrayList<>();
    for (Experiment.Run r : result.runs()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("name", r.sampler());
      m.put("seed", r.seed());
      m.put("mem_percent", Double.isNaN(r.memPercent()) ? null : round(r.memPercent(), 4));
      Map<String, Object> recall = new LinkedHashMap<>();
      for (int k : RetrievalMetrics.RECALL_AT) {
        recall.put(Integer.toString(k), round(r.metrics().recallAt(k), 4));
      }
      m.put("recall", recall);
      Map<String, Object> mrr = new LinkedHashMap<>();
      for (int k : RetrievalMetrics.MRR_AT) {
        mrr.put(Integer.toString(k), round(r.metrics().mrr().get(k), 4));
      }
      m.put("mrr", mrr);
      m.put("steps", r.steps());
      m.put("steps_per_s", round(r.stepsPerSecond(), 2));
      m.put("wall_s", round(r.wallSeconds(), 1));
      m.put("pairs_dead_lettered", r.pairsDeadLettered());
      m.put("reencode_cycles", r.reencodeCycles());
      m.put("diverged", r.diverged());
      m.put("loss_spikes", r.lossSpikes());
      m.put(
          "reencode_mean_cosine",
          Double.isNaN(r.reencodeMeanCosine()) ? null : round(r.reencodeMeanCosine(), 4));
      Map<String, Object> fidelity = new LinkedHashMap<>();
      r.fidelity().entrySet().stream()
          .sorted(Map.Entry.comparingByKey())
          .forEach(e -> fidelity.put(e.getKey(), round(e.getValue(), 4)));
      m.put("fidelity", fidelity.isEmpty() ? null : fidelity);
      List<Map<String, Object>> curve = new ArrayList<>();
      for (RecallPlot.Point p : r.curve()) {
        curve.add(Map.of("step", p.step(), "recall_1", round(p.value(), 4)));
      }
      m.put("curve", curve);
      samplers.add(m);
    }
    json.put("samplers", samplers);
    if (result.bm25() != null) {
      Map<String, Object> bm25 = new LinkedHashMap<>();
      result.bm25().recall().forEach((k, v) -> bm25.put("recall_" + k, round(v, 4)));
      result.bm25().mrr().forEach((k, v) -> bm25.put("mrr_" + k, round(v, 4)));
      json.put("bm25", bm25);
    }
    Map<String, Double> closed = gapClosed(result.runs());
    if (!closed.isEmpty()) {
      Map<String, Object> rounded = new LinkedHashMap<>();
      closed.forEach((k, v) -> rounded.put(k, round(v, 4)));
      json.put("r1_gap_closed", rounded);
    }
    if (file.getParent() != null) {
      Files.createDirectories(file.getParent());
    }
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), json);
  }

  /**
   * R@1 on the curve queries against training step, one line per sampler (the mean over seeds at
   * each step).
   */
  public static void writePlot(Experiment.Result result, Path png) throws IOException {
    Map<String, List<RecallPlot.Point>> series = new LinkedHashMap<>();
    bySampler(result.runs())
        .forEach(
            (sampler, list) -> {
              TreeMap<Long, double[]> sums = new TreeMap<>();
              for (Experiment.Run r : list) {
                for (RecallPlot.Point p : r.curve()) {
                  double[] s = sums.computeIfAbsent(p.step(), k -> new double[2]);
                  s[0] += p.value();
                  s[1]++;
                }
              }
              List<RecallPlot.Point> points = new ArrayList<>();
              sums.forEach((step, s) -> points.add(new RecallPlot.Point(step, s[0] / s[1])));
              series.put(sampler, points);
            });
    int seeds = (int) result.runs().stream().mapToLong(Experiment.Run::seed).distinct().count();
    RecallPlot.write(
        png,
        "R@1 while training ("
            + result.dataset().get("name")
            + ", mean of "
            + seeds
            + " seed"
            + (seeds == 1 ? "" : "s")
            + ")",
        "R@1 (" + result.dataset().get("curve_eval_queries") + " eval queries)",
        series,
        960,
        600);
  }

  private static Map<String, List<Experiment.Run>> bySampler(List<Experiment.Run> runs) {
    Map<String, List<Experiment.Run>> out = new LinkedHashMap<>();
    for (Experiment.Run r : runs) {
      out.computeIfAbsent(r.sampler(), k -> new ArrayList<>()).add(r);
    }
    return out;
  }

  private static double[] values(Experiment.Run r) {
    return values(r.metrics(), r.memPercent(), r.stepsPerSecond(), r.wallSeconds());
  }

  /** A row's columns, in {@link #COLUMNS}' order. */
  private static double[] values(
      RetrievalMetrics m, double memPercent, double stepsPerSecond, double wallSeconds) {
    return new double[] {
      memPercent,
      m.recallAt(1),
      m.recallAt(5),
      m.recallAt(10),
      m.recallAt(20),
      m.recallAt(100),
      m.mrr().get(10),
      stepsPerSecond,
      wallSeconds
    };
  }

  private static double[] mean(List<Experiment.Run> runs) {
    double[] sum = new double[COLUMNS.length];
    for (Experiment.Run r : runs) {
      double[] v = values(r);
      for (int i = 0; i < v.length; i++) {
        sum[i] += v[i] / runs.size();
      }
    }
    return sum;
  }

  /** Sample standard deviation per column (n - 1; 0 for one run). */
  private static double[] std(List<Experiment.Run> runs) {
    double[] mean = mean(runs);
    double[] sum = new double[COLUMNS.length];
    for (Experiment.Run r : runs) {
      double[] v = values(r);
      for (int i = 0; i < v.length; i++) {
        sum[i] += (v[i] - mean[i]) * (v[i] - mean[i]);
      }
    }
    for (int i = 0; i < sum.length; i++) {
      sum[i] = runs.size() < 2 ? 0 : Math.sqrt(sum[i] / (runs.size() - 1));
    }
    return sum;
  }

  private static void row(StringBuilder out, int width, String label, double[] v) {
    out.append(String.format("%-" + width + "s", label));
    out.append(
        String.format(
            "  %7s",
            Double.isNaN(v[0])
                ? "-"
                : v[0] < 10 ? String.format("%.2f", v[0]) : String.format("%.0f", v[0])));
    for (int i = 1; i <= 6; i++) {
      out.append(String.format("  %7.3f", v[i]));
    }
    out.append(
        Double.isNaN(v[7]) ? "        -        -" : String.format("  %7.1f  %7.0f", v[7], v[8]));
    out.append('\n');
  }

  private static double round(double v, int digits) {
    double f = Math.pow(10, digits);
    return Math.round(v * f) / f;
  }
}
