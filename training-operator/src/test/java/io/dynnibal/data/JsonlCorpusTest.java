package io.dynnibal.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JsonlCorpusTest {
  @TempDir Path dir;

  @Test
  void readsPlainAndGzipByContentNotName() throws IOException {
    String lines =
        "{\"target_id\": \"0ad\", \"target_text\": \"0ad\\nA game\"}\n\n{\"target_id\": \"zsh\", \"target_text\": \"zsh\"}\n";
    Path plain = dir.resolve("t.jsonl.gz"); // misleading name, plain content
    Files.writeString(plain, lines);
    Path gz = dir.resolve("t.jsonl");
    try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(gz))) {
      out.write(lines.getBytes(StandardCharsets.UTF_8));
    }
    List<TargetText> expected =
        List.of(new TargetText("0ad", "0ad\nA game"), new TargetText("zsh", "zsh"));
    assertEquals(expected, JsonlCorpus.readTargets(plain));
    assertEquals(expected, JsonlCorpus.readTargets(gz));
  }

  @Test
  void aBadLineNamesItsFileAndLineNumber() throws IOException {
    Path file = dir.resolve("q.jsonl");
    Files.writeString(
        file,
        "{\"query_id\": \"q:a\", \"query_text\": \"x\", \"target_id\": \"a\"}\n{\"query_id\": 3}\n");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> JsonlCorpus.readQueries(file));
    assertTrue(
        e.getMessage().contains("line 2") && e.getMessage().contains("query_id"), e.getMessage());
    Files.writeString(file, "not json\n");
    e = assertThrows(IllegalArgumentException.class, () -> JsonlCorpus.readQueries(file));
    assertTrue(e.getMessage().contains("line 1"), e.getMessage());
  }

  @Test
  void duplicateTargetIdsAreRefused() throws IOException {
    Path file = dir.resolve("t.jsonl");
    Files.writeString(
        file,
        "{\"target_id\": \"a\", \"target_text\": \"x\"}\n{\"target_id\": \"a\", \"target_text\": \"y\"}\n");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> JsonlCorpus.readTargets(file));
    assertTrue(
        e.getMessage().contains("line 2") && e.getMessage().contains("first on line 1"),
        e.getMessage());
  }

  @Test
  void duplicateQueryIdsAreRefusedWithBothLines() throws IOException {
    Path file = dir.resolve("q.jsonl");
    Files.writeString(
        file,
        "{\"query_id\": \"q\", \"query_text\": \"x\", \"target_id\": \"a\"}\n\n"
            + "{\"query_id\": \"r\", \"query_text\": \"y\", \"target_id\": \"a\"}\n"
            + "{\"query_id\": \"q\", \"query_text\": \"z\", \"target_id\": \"b\"}\n");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> JsonlCorpus.readQueries(file));
    assertTrue(
        e.getMessage().contains("line 4")
            && e.getMessage().contains("query_id \"q\"")
            && e.getMessage().contains("first on line 1"),
        e.getMessage());
  }

  @Test
  void contentAfterALinesObjectIsAnErrorNotDropped() throws IOException {
    Path file = dir.resolve("t.jsonl");
    Files.writeString(
        file,
        "{\"target_id\": \"a\", \"target_text\": \"x\"}\n"
            + "{\"target_id\": \"b\", \"target_text\": \"y\"}{\"target_id\": \"c\", \"target_text\": \"z\"}\n");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> JsonlCorpus.readTargets(file));
    assertTrue(e.getMessage().contains("line 2"), e.getMessage());
    Files.writeString(file, "[\"a\"]\n");
    e = assertThrows(IllegalArgumentException.class, () -> JsonlCorpus.readTargets(file));
    assertTrue(e.getMessage().contains("line 1: not a JSON object"), e.getMessage());
  }

  @Test
  void aMissingFileIsAClearError() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> JsonlCorpus.readTargets(dir.resolve("absent.jsonl")));
    assertTrue(e.getMessage().contains("no such file"), e.getMessage());
  }
}
