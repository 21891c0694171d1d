package io.dynnibal.data;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.zip.GZIPInputStream;

/**
 * Reads the corpus files users hand us: JSON Lines, gzip-compressed or plain (told apart by the
 * gzip magic bytes, not the file name). Targets are {@code {"target_id", "target_text"}}, queries
 * {@code {"query_id", "query_text", "target_id"}} - the layout of {@code data/debian-packages/}. A
 * bad line fails the read with its file and line number: one that is not one JSON object (content
 * after the object included), lacks a field, or repeats an id of its file; blank lines are skipped.
 */
public final class JsonlCorpus {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One line, one JSON value: anything after it on the line is an error, not dropped. */
  private static final ObjectReader LINE =
      JSON.readerFor(JsonNode.class).with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private JsonlCorpus() {}

  /** One record kind: how a line becomes one, and the field that identifies it. */
  private record Kind<T>(Function<JsonNode, T> parse, String idField, Function<T, String> id) {}

  private static final Kind<TargetText> TARGETS =
      new Kind<>(
          node -> new TargetText(text(node, "target_id"), text(node, "target_text")),
          "target_id",
          TargetText::targetId);

  private static final Kind<LabelledQuery> QUERIES =
      new Kind<>(
          node ->
              new LabelledQuery(
                  text(node, "query_id"), text(node, "query_text"), text(node, "target_id")),
          "query_id",
          LabelledQuery::queryId);

  public static List<TargetText> readTargets(Path file) {
    return read(file, TARGETS);
  }

  public static List<LabelledQuery> readQueries(Path file) {
    return read(file, QUERIES);
  }

  /**
   * Targets from a stream (e.g. a corpus bundled as a resource); {@code name} appears in error
   * messages.
   */
  public static List<TargetText> readTargets(InputStream in, String name) {
    return read(in, name, TARGETS);
  }

  public static List<LabelledQuery> readQueries(InputStream in, String name) {
    return read(in, name, QUERIES);
  }

  /** Opens a JSONL file, decompressing when it starts with the gzip magic. */
  public static BufferedReader open(Path file) throws IOException {
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("no such file: " + file);
    }
    return open(Files.newInputStream(file));
  }

  private static BufferedReader open(InputStream raw) throws IOException {
    InputStream in = new BufferedInputStream(raw, 1 << 16);
    in.mark(2);
    int b1 = in.read();
    int b2 = in.read();
    in.reset();
    if (b1 == 0x1f && b2 == 0x8b) {
      in = new GZIPInputStream(in, 1 << 16);
    }
    return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 1 << 16);
  }

  private static <T> List<T> read(Path file, Kind<T> kind) {
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("no such file: " + file);
    }
    try {
      return read(Files.newInputStream(file), file.toString(), kind);
    } catch (IOException e) {
      throw new UncheckedIOException("could not read " + file + ": " + e.getMessage(), e);
    }
  }

  private static <T> List<T> read(InputStream stream, String file, Kind<T> kind) {
    List<T> out = new ArrayList<>();
    Map<String, Integer> firstLine = new HashMap<>();
    try (BufferedReader reader = open(stream)) {
      String line;
      int number = 0;
      while ((line = reader.readLine()) != null) {
        number++;
        if (line.isBlank()) {
          continue;
        }
        try {
          JsonNode node = LINE.readValue(line);
          if (node == null || !node.isObject()) {
            throw new IllegalArgumentException("not a JSON object");
          }
          T record = kind.parse().apply(node);
          String id = kind.id().apply(record);
          Integer first = firstLine.putIfAbsent(id, number);
          if (first != null) {
            throw new IllegalArgumentException(
                kind.idField() + " \"" + id + "\" appears again (first on line " + first + ")");
          }
          out.add(record);
        } catch (JsonProcessingException | IllegalArgumentException e) {
          throw new IllegalArgumentException(file + " line " + number + ": " + e.getMessage(), e);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not read " + file + ": " + e.getMessage(), e);
    }
    return out;
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || !value.isTextual()) {
      throw new IllegalArgumentException("field \"" + field + "\" is missing or not a string");
    }
    return value.asText();
  }
}
