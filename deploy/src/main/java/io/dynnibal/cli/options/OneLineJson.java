package io.dynnibal.cli.options;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.MinimalPrettyPrinter;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One JSON object (a command's figures, `version --json`) of numbers, strings, and nested objects
 * and arrays of them, in the order the figures were put, on one line: {@code {"key": 1, "other":
 * "text", "group": {"a": 0.5}, "each": [1.5, 2]}}. A figure that is neither a number, a map nor a
 * list is written as its string; a missing one (null) as null.
 */
public final class OneLineJson {
  private static final ObjectWriter WRITER = new ObjectMapper().writer(new OneLine());

  private OneLineJson() {}

  public static String of(Map<String, ?> figures) {
    try {
      return WRITER.writeValueAsString(plain(figures));
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Numbers, nulls, nested maps and lists as they are; anything else as its string. */
  private static Map<String, Object> plain(Map<String, ?> figures) {
    Map<String, Object> out = new LinkedHashMap<>();
    figures.forEach((key, value) -> out.put(key, plain(value)));
    return out;
  }

  private static Object plain(Object value) {
    if (value instanceof Map<?, ?> nested) {
      return plain(stringKeys(nested));
    }
    if (value instanceof List<?> list) {
      return list.stream().map(OneLineJson::plain).toList();
    }
    return value == null || value instanceof Number ? value : String.valueOf(value);
  }

  private static Map<String, ?> stringKeys(Map<?, ?> map) {
    Map<String, Object> out = new LinkedHashMap<>();
    map.forEach((k, v) -> out.put(String.valueOf(k), v));
    return out;
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
