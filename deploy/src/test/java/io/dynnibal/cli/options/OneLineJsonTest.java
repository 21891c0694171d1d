package io.dynnibal.cli.options;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The figures' JSON: one line, in order, numbers as numbers, maps as objects and everything else as
 * text.
 */
class OneLineJsonTest {
  @Test
  void oneLineInOrderNumbersAndStrings() throws Exception {
    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("steps", 15);
    figures.put("recall_at_10", 0.25);
    figures.put("snapshot", "file:/tmp/a \"b\"\\c");
    figures.put("gpu", true);
    figures.put("shards", List.of(1, 2));
    String json = OneLineJson.of(figures);
    assertEquals(
        "{\"steps\": 15, \"recall_at_10\": 0.25, \"snapshot\": \"file:/tmp/a \\\"b\\\"\\\\c\","
            + " \"gpu\": \"true\", \"shards\": [1, 2]}",
        json);
    JsonNode parsed = new ObjectMapper().readTree(json);
    assertEquals(15, parsed.get("steps").asInt());
    assertEquals("file:/tmp/a \"b\"\\c", parsed.get("snapshot").asText());
  }

  @Test
  void controlCharactersAreEscaped() throws Exception {
    String json = OneLineJson.of(Map.of("line", "a\nb"));
    assertEquals("{\"line\": \"a\\nb\"}", json);
    assertEquals("a\nb", new ObjectMapper().readTree(json).get("line").asText());
  }

  @Test
  void aMissingFigureIsNull() throws Exception {
    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("feedback_latency_steps", null);
    String json = OneLineJson.of(figures);
    assertEquals("{\"feedback_latency_steps\": null}", json);
    assertEquals(true, new ObjectMapper().readTree(json).get("feedback_latency_steps").isNull());
  }

  @Test
  void nestedFiguresAreNestedObjects() throws Exception {
    Map<String, Object> inner = new LinkedHashMap<>();
    inner.put("mass_ratio", 0.5);
    inner.put("note", "x");
    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("samplers", Map.of("mh", inner));
    String json = OneLineJson.of(figures);
    assertEquals("{\"samplers\": {\"mh\": {\"mass_ratio\": 0.5, \"note\": \"x\"}}}", json);
    assertEquals(
        0.5,
        new ObjectMapper().readTree(json).get("samplers").get("mh").get("mass_ratio").asDouble());
  }

  @Test
  void aListOfFiguresIsAnArray() throws Exception {
    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("feedback_latency_ms_each", List.of(250.0, 4250.5));
    figures.put("none", List.of());
    String json = OneLineJson.of(figures);
    assertEquals("{\"feedback_latency_ms_each\": [250.0, 4250.5], \"none\": []}", json);
    assertEquals(
        4250.5,
        new ObjectMapper().readTree(json).get("feedback_latency_ms_each").get(1).asDouble());
  }

  @Test
  void noFiguresIsAnEmptyObject() {
    assertEquals("{}", OneLineJson.of(Map.of()));
  }
}
