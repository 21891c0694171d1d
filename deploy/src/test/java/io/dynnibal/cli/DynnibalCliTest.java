package io.dynnibal.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DynnibalCliTest {

  @Test
  void helpListsEveryCommand() {
    String help = captureStdout(() -> assertEquals(0, DynnibalCli.execute("--help")));
    for (String command :
        new String[] {
          "version", "train", "eval", "demo", "publish", "kafka", "cluster", "submit", "jobs",
          "cancel", "watch"
        }) {
      assertTrue(help.contains("  " + command + " "), command + " missing from:\n" + help);
    }
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"demo", "submit", "cancel", "watch", "jobs", "cluster start", "kafka stop"})
  void everyCommandAnswersHelp(String command) {
    String[] args = (command + " --help").split(" ");
    String help = captureStdout(() -> assertEquals(0, DynnibalCli.execute(args)));
    assertTrue(help.startsWith("Usage: dynnibal " + command), help);
  }

  @Test
  void noCommandIsAUsageError() {
    assertEquals(2, DynnibalCli.execute());
  }

  @Test
  void submitRejectsABadConfigurationBeforeContactingAnything() {
    assertEquals(
        1,
        DynnibalCli.execute(
            "submit", "--set", "batch.size=0", "--jobmanager", "http://127.0.0.1:9"));
  }

  @Test
  void trainRefusesAnUnnamedShareWithoutThePoolOfPositives() {
    assertEquals(
        2,
        DynnibalCli.execute(
            "train", "--targets", "t.jsonl", "--train", "p.jsonl", "--unnamed-share", "0.1"));
    // With the pool of positives the same flags pass the check and fail later, on the missing
    // files.
    assertEquals(
        1,
        DynnibalCli.execute(
            "train",
            "--targets",
            "t.jsonl",
            "--train",
            "p.jsonl",
            "--negatives-pool",
            "positives",
            "--unnamed-share",
            "0.1"));
  }

  @Test
  void jobsWithoutAClusterFailsWithTheReason() {
    assertEquals(1, DynnibalCli.execute("jobs", "--jobmanager", "http://127.0.0.1:9"));
  }

  @Test
  void versionNamesTheStackItRunsOn() {
    Map<String, String> versions = VersionCommand.versions();
    assertEquals(
        java.util.List.of(
            "dynnibal",
            "java",
            "flink",
            "kafka",
            "avro",
            "djl",
            "libtorch",
            "gpu",
            "device",
            "kernels"),
        java.util.List.copyOf(versions.keySet()));
    // The tests' JVMs have the module (surefire's argLine), as the CLI's launcher gives it.
    if (System.getProperty("os.arch").matches("amd64|x86_64")) {
      assertEquals("Vector API (jdk.incubator.vector)", versions.get("kernels"));
    }
    assertTrue(versions.get("flink").matches("2\\.\\d+\\.\\d+"), versions.toString());
    assertTrue(versions.get("kafka").matches("4\\.\\d+\\.\\d+"), versions.toString());
    assertTrue(versions.get("libtorch").matches("\\d+\\.\\d+\\.\\d+.*"), versions.toString());
  }

  @Test
  void versionAsJsonIsOneObject() {
    String json =
        captureStdout(() -> assertEquals(0, DynnibalCli.execute("version", "--json"))).trim();
    assertTrue(json.startsWith("{\"dynnibal\": ") && json.endsWith("}"), json);
  }

  /** Runs the CLI, expects exit code 0, and returns what it printed (trimmed). */
  private static String succeeds(String... args) {
    return captureStdout(() -> assertEquals(0, DynnibalCli.execute(args))).trim();
  }

  private static String captureStdout(Runnable action) {
    PrintStream original = System.out;
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
    try {
      action.run();
    } finally {
      System.setOut(original);
    }
    return buffer.toString(StandardCharsets.UTF_8);
  }

  /** train writes a snapshot, eval reads it back and reports the same metrics. */
  @Test
  void trainThenEvalTheSnapshotOnATinyCorpus(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws java.io.IOException {
    java.nio.file.Path targets = dir.resolve("targets.jsonl");
    java.nio.file.Path queries = dir.resolve("queries.jsonl");
    StringBuilder t = new StringBuilder();
    StringBuilder q = new StringBuilder();
    String[] words = {
      "audio", "video", "editor", "library", "perl", "python", "game", "server", "font", "kernel"
    };
    for (int i = 0; i < 40; i++) {
      String name = "pkg" + i + "-" + words[i % 10];
      t.append("{\"target_id\": \"")
          .append(name)
          .append("\", \"target_text\": \"")
          .append(name)
          .append("\\n")
          .append(words[i % 10])
          .append(' ')
          .append(words[(i * 7) % 10])
          .append(" tool number ")
          .append(i)
          .append("\"}\n");
      q.append("{\"query_id\": \"q:")
          .append(name)
          .append("\", \"query_text\": \"")
          .append(words[i % 10])
          .append(" tool ")
          .append(i)
          .append("\", \"target_id\": \"")
          .append(name)
          .append("\"}\n");
    }
    java.nio.file.Files.writeString(targets, t);
    java.nio.file.Files.writeString(queries, q);
    java.nio.file.Path snapshots = dir.resolve("snapshots");
    String trained =
        succeeds(
            "train",
            "--targets",
            targets.toString(),
            "--train",
            queries.toString(),
            "--eval",
            queries.toString(),
            "--batch",
            "8",
            "--uniform-negatives",
            "4",
            "--epochs",
            "3",
            "--buckets",
            "4096",
            "--embedding-dim",
            "16",
            "--hidden-dim",
            "32",
            "--output-dim",
            "16",
            "--snapshot-dir",
            snapshots.toString());
    assertTrue(
        trained.contains("\"steps\": 15") && trained.contains("\"snapshot\": \"file:"), trained);
    String recall = trained.replaceAll(".*\"after_recall_at_10\": ([0-9.]+).*", "$1");
    java.nio.file.Path snapshot;
    try (var entries = java.nio.file.Files.list(snapshots)) {
      snapshot = entries.findFirst().orElseThrow();
    }
    String evaluated =
        succeeds(
            "eval",
            "--snapshot",
            snapshot.toString(),
            "--targets",
            targets.toString(),
            "--queries",
            queries.toString());
    assertTrue(
        evaluated.contains("\"recall_at_10\": " + recall + ","),
        "eval disagrees with train: " + recall + " vs " + evaluated);
  }

  @Test
  void evalOfAMissingSnapshotFailsWithTheReason(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
    assertEquals(
        1,
        DynnibalCli.execute(
            "eval",
            "--snapshot",
            dir.resolve("none").toString(),
            "--targets",
            "t",
            "--queries",
            "q"));
  }
}
