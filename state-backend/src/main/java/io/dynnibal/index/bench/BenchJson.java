package io.dynnibal.index.bench;

import java.util.Map;

/** The benchmarks' output: one flat JSON object of numbers and strings, in the order the figures were put. */
public final class BenchJson {
  private BenchJson() {}

  public static String of(Map<String, Object> figures) {
    StringBuilder json = new StringBuilder("{");
    figures.forEach((key, value) -> {
      json.append(json.length() > 1 ? ", " : "").append('"').append(key).append("\": ");
      if (value instanceof Number) {
        json.append(value);
      } else {
        json.append('"').append(String.valueOf(value).replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
      }
    });
    return json.append('}').toString();
  }
}
