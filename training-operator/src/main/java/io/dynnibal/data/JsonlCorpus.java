package io.dynnibal.data;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.zip.GZIPInputStream;

/**
 * Reads the corpus files users hand us: JSON Lines, gzip-compressed or plain (told apart by the
 * gzip magic bytes, not the file name). Targets are {@code {"target_id", "target_text"}}, queries
 * {@code {"query_id", "query_text", "target_id"}} - the layout of {@code data/debian-packages/}. A
 * bad line fails the read with its file and line number; blank lines are skipped.
 */
public final class JsonlCorpus {
  private static final ObjectMapper JSON = new ObjectMapper();

  private JsonlCorpus() {}

  public static List<TargetText> readTargets(Path file) {
    return unique(
        read(file, node -> new TargetText(text(node, "target_id"), text(node, "target_text"))),
        file.toString());
  }

  private static List<TargetText> unique(List<TargetText> targets, String file) {
    Set<String> seen = new HashSet<>();
    for (TargetText t : targets) {
      if (!seen.add(t.targetId())) {
        throw new IllegalArgumentException(
            file + ": target_id \"" + t.targetId() + "\" appears more than once");
      }
    }
    return targets;
  }

  public static List<LabelledQuery> readQueries(Path file) {
    return read(
        file,
        node ->
            new LabelledQuery(
                text(node, "query_id"), text(node, "query_text"), text(node, "target_id")));
  }

  /**
   * Targets from a stream (e.g. a corpus bundled as a resource); {@code name} appears in error
   * messages.
   */
  public static List<TargetText> readTargets(InputStream in, String name) {
    return unique(
        read(in, name, node -> new TargetText(text(node, "target_id"), text(node, "target_text"))),
        name);
  }

  public static List<LabelledQuery> readQueries(InputStream in, String name) {
    return read(
        in,
        name,
        node ->
            new LabelledQuery(
                text(node, "query_id"), text(node, "query_text"), text(node, "target_id")));
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

  private static <T> List<T> read(Path file, Function<JsonNode, T> parse) {
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("no such file: " + file);
    }
    try {
      return read(Files.newInputStream(file), file.toString(), parse);
    } catch (IOException e) {
      throw new UncheckedIOException("could not read " + file + ": " + e.getMessage(), e);
    }
  }

  private static <T> List<T> read(InputStream stream, String file, Function<JsonNode, T> parse) {
    List<T> out = new ArrayList<>();
    try (BufferedReader reader = open(stream)) {
      String line;
      int number = 0;
      while ((line = reader.readLine()) != null) {
        number++;
        if (line.isBlank()) {
          continue;
        }
        try {
          out.add(parse.apply(JSON.readTree(line)));
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
