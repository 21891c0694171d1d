package io.dynnibal.search;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.dynnibal.cli.DynnibalCli;
import io.dynnibal.data.JsonlCorpus;
import io.dynnibal.data.TargetText;
import io.dynnibal.index.VectorMath;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.FeatureConfig;
import io.dynnibal.snapshot.ParameterSnapshots;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exact search against brute force, the exported HNSW index against exact search, and the two
 * commands' output, on an untrained model over a synthetic corpus (ranking quality is not the point
 * here: agreement is).
 */
class SearchAndExportTest {
  private static final String[] WORDS = {
    "audio", "video", "kernel", "python", "library", "driver", "font", "game", "editor", "network",
    "shell", "database", "compiler", "image", "crypto", "mail", "web", "server", "client", "docs",
    "strategy", "real-time", "terminal", "emulator", "plugin", "theme", "icons", "utility"
  };
  private static final DualEncoderConfig SMALL =
      new DualEncoderConfig(new FeatureConfig(1 << 12, 32, 8, 3, 4), 16, 32, 24, true, 20f);

  @TempDir static Path dir;
  private static URI snapshot;
  private static Path targetsFile;
  private static List<TargetText> targets;

  @BeforeAll
  static void corpusAndModel() throws IOException {
    SplittableRandom random = new SplittableRandom(3);
    StringBuilder jsonl = new StringBuilder();
    ObjectMapper json = new ObjectMapper();
    for (int i = 0; i < 2000; i++) {
      StringBuilder text = new StringBuilder("pkg" + i);
      for (int w = 0; w < 8; w++) {
        text.append(' ').append(WORDS[random.nextInt(WORDS.length)]);
      }
      jsonl
          .append(
              json.writeValueAsString(
                  java.util.Map.of("target_id", "t" + i, "target_text", text.toString())))
          .append('\n');
    }
    targetsFile = Files.writeString(dir.resolve("targets.jsonl"), jsonl);
    targets = JsonlCorpus.readTargets(targetsFile);
    try (DualEncoder encoder = DualEncoder.create(SMALL, 5)) {
      snapshot = ParameterSnapshots.write(encoder, dir.resolve("snapshots").toUri(), 1, 5);
    }
  }

  @Test
  void exactSearchIsBruteForceAndItsEmbeddingsAreCachedNextToTheSnapshot() throws IOException {
    try (Retriever retriever = Retriever.exact(snapshot, targetsFile);
        DualEncoder encoder = ParameterSnapshots.readEncoder(snapshot)) {
      float[] q =
          encoder.encodeQueries(List.of(encoder.featurizeQuery("real-time strategy game")))[0];
      float[][] t =
          encoder.encodeTargets(
              encoder.featurizeTargets(targets.stream().map(TargetText::text).toList()));
      List<String> expected =
          IntStream.range(0, t.length)
              .boxed()
              .sorted(Comparator.comparingDouble(i -> -VectorMath.dot(q, t[i])))
              .limit(10)
              .map(i -> targets.get(i).targetId())
              .toList();
      List<Hit> hits = retriever.search("real-time strategy game", 10);
      assertEquals(expected, hits.stream().map(Hit::targetId).toList());
      for (int i = 1; i < hits.size(); i++) {
        assertTrue(hits.get(i - 1).score() >= hits.get(i).score());
      }
    }
    Path cache = TargetEmbeddings.cacheFile(ParameterSnapshots.toPath(snapshot), targetsFile);
    assertTrue(Files.exists(cache), "the targets' embeddings are cached");
    try (Retriever again = Retriever.exact(snapshot, targetsFile)) {
      assertEquals(targets.size(), again.embeddings().vectors().length);
    }
  }

  @Test
  void theExportedIndexAgreesWithExactSearch() throws IOException {
    Path out = dir.resolve("exported");
    try (Retriever exact = Retriever.exact(snapshot, targetsFile)) {
      LuceneVectorIndex.write(
          out, exact.embeddings(), exact.encoder(), ParameterSnapshots.manifest(snapshot));
      assertThrows(
          IOException.class,
          () ->
              LuceneVectorIndex.write(
                  out, exact.embeddings(), exact.encoder(), ParameterSnapshots.manifest(snapshot)),
          "export never overwrites");
      SplittableRandom random = new SplittableRandom(9);
      int same = 0;
      int queries = 100;
      try (Retriever hnsw = Retriever.exported(out)) {
        for (int i = 0; i < queries; i++) {
          String query =
              WORDS[random.nextInt(WORDS.length)] + " " + WORDS[random.nextInt(WORDS.length)];
          List<Hit> want = exact.search(query, 10);
          List<Hit> got = hnsw.search(query, 10);
          same += ids(want).equals(ids(got)) ? 1 : 0;
          for (Hit h : got) {
            for (Hit w : want) {
              if (w.targetId().equals(h.targetId())) {
                assertEquals(w.score(), h.score(), 1e-4, "scores are <q, t>");
              }
            }
          }
        }
      }
      assertTrue(same >= 0.95 * queries, same + " of " + queries + " top-10 lists agree");
    }
  }

  private static java.util.Set<String> ids(List<Hit> hits) {
    return new java.util.HashSet<>(hits.stream().map(Hit::targetId).toList());
  }

  @Test
  void searchPrintsARankedListOrJsonAndExportReportsAgreement() throws Exception {
    String table =
        stdout(
            "search",
            "--snapshot",
            snapshot.toString(),
            "--targets",
            targetsFile.toString(),
            "--query",
            "terminal emulator",
            "--k",
            "3");
    List<String> lines = table.lines().toList();
    assertEquals("query: terminal emulator", lines.get(0));
    assertEquals(4, lines.size(), table);
    assertTrue(lines.get(1).startsWith("  1  "), table);

    Path out = dir.resolve("exported-by-cli");
    Path queries = dir.resolve("queries.jsonl");
    Files.writeString(
        queries,
        "{\"query_id\": \"q1\", \"query_text\": \"web server\", \"target_id\": \"t1\"}\n"
            + "{\"query_id\": \"q2\", \"query_text\": \"font theme icons\", \"target_id\": \"t2\"}\n");
    JsonNode figures =
        new ObjectMapper()
            .readTree(
                stdout(
                    "export",
                    "--snapshot",
                    snapshot.toString(),
                    "--targets",
                    targetsFile.toString(),
                    "--out",
                    out.toString(),
                    "--verify-queries",
                    queries.toString()));
    assertEquals(2000, figures.get("targets").asInt());
    assertEquals(2, figures.get("verify_queries").asInt());

    JsonNode answer =
        new ObjectMapper()
            .readTree(
                stdout("search", "--index", out.toString(), "--query", "web server", "--json"));
    assertEquals("web server", answer.get("query").asText());
    assertEquals(10, answer.get("hits").size());
    assertEquals(1, answer.get("hits").get(0).get("rank").asInt());
    assertTrue(answer.get("hits").get(0).get("text").asText().startsWith("pkg"));
  }

  private static String stdout(String... args) {
    PrintStream original = System.out;
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
    try {
      assertEquals(0, DynnibalCli.execute(args), String.join(" ", args));
    } finally {
      System.setOut(original);
    }
    return buffer.toString(StandardCharsets.UTF_8);
  }
}
