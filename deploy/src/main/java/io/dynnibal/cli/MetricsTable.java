package io.dynnibal.cli;

import io.dynnibal.eval.RetrievalMetrics;
import java.util.List;

/** The paper's result columns as a plain-text table. */
final class MetricsTable {
  private MetricsTable() {}

  record Row(String label, RetrievalMetrics metrics) {}

  static String render(List<Row> rows) {
    int width = Math.max(8, rows.stream().mapToInt(r -> r.label().length()).max().orElse(0));
    StringBuilder out = new StringBuilder();
    out.append(String.format("%-" + width + "s", ""));
    for (int k : RetrievalMetrics.RECALL_AT) {
      out.append(String.format("  %6s", "R@" + k));
    }
    for (int k : RetrievalMetrics.MRR_AT) {
      out.append(String.format("  %7s", "MRR@" + k));
    }
    out.append(System.lineSeparator());
    for (Row row : rows) {
      out.append(String.format("%-" + width + "s", row.label()));
      for (int k : RetrievalMetrics.RECALL_AT) {
        out.append(String.format("  %6.3f", row.metrics().recall().get(k)));
      }
      for (int k : RetrievalMetrics.MRR_AT) {
        out.append(String.format("  %7.3f", row.metrics().mrr().get(k)));
      }
      out.append(System.lineSeparator());
    }
    return out.toString();
  }
}
