package io.dynnibal.index.bench;

import java.util.Map;

/**
 * One flat JSON object (the benchmarks' figures, `version --json`) of numbers and strings, in the
 * order the figures were put.
 */
public final class BenchJson {
  private BenchJson() {}

  public static String of(Map<String, Object> figures) {
    StringBuilder json = new StringBuilder("{");
    figures.forEach(
        (key, value) -> {
          json.append(json.length() > 1 ? ", " : "").append('"').append(key).append("\": ");
          if (value instanceof Number) {
            json.append(value);
          } else {
            json.append('"')
                .append(String.valueOf(value).replace("\\", "\\\\").replace("\"", "\\\""))
                .append('"');
          }
        });
    return json.append('}').toString();
  }
}
