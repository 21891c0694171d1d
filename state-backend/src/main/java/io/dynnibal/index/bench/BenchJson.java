package io.dynnibal.index.bench;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.MinimalPrettyPrinter;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One flat JSON object (the benchmarks' figures, `version --json`) of numbers and strings, in the
 * order the figures were put, on one line: {@code {"key": 1, "other": "text"}}. A figure that is
 * not a number is written as its string; a missing one (null) as null.
 */
public final class BenchJson {
  private static final ObjectWriter WRITER = new ObjectMapper().writer(new OneLine());

  private BenchJson() {}

  public static String of(Map<String, Object> figures) {
    Map<String, Object> flat = new LinkedHashMap<>();
    figures.forEach(
        (key, value) ->
            flat.put(
                key, value == null || value instanceof Number ? value : String.valueOf(value)));
    try {
      return WRITER.writeValueAsString(flat);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Jackson's compact output with a space after each colon and comma. */
  private static final class OneLine extends MinimalPrettyPrinter {
    @Override
    public void writeObjectFieldValueSeparator(JsonGenerator g) throws IOException {
      g.writeRaw(": ");
    }

    @Override
    public void writeObjectEntrySeparator(JsonGenerator g) throws IOException {
      g.writeRaw(", ");
    }

    @Override
    public void writeArrayValueSeparator(JsonGenerator g) throws IOException {
      g.writeRaw(", ");
    }
  }
}
