package io.dynnibal.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.schemas.Target;
import io.dynnibal.schemas.TrainingPair;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code publish} against a real (in-process) broker: counts, end offsets, and records the job can
 * read.
 */
class PublishCommandTest {
  @TempDir Path dir;

  @Test
  void publishesTargetsAndPairsAsTheJobReadsThem() throws Exception {
    Path targets = dir.resolve("targets.jsonl");
    Files.writeString(
        targets,
        """
        {"target_id": "zsh", "target_text": "zsh\\nshell with lots of features"}
        {"target_id": "bash", "target_text": "bash\\nGNU Bourne Again SHell"}
        {"target_id": "fish", "target_text": "fish\\nfriendly interactive shell"}
        """);
    Path pairs = dir.resolve("pairs.jsonl");
    Files.writeString(
        pairs,
        """
        {"query_id": "q:zsh", "query_text": "shell with lots of features", "target_id": "zsh"}
        {"query_id": "q:bash", "query_text": "GNU Bourne Again SHell", "target_id": "bash"}
        """);
    try (EmbeddedKafkaBroker kafka = EmbeddedKafkaBroker.start(dir.resolve("kafka"))) {
      String json =
          stdout(
              () ->
                  assertEquals(
                      0,
                      DynnibalCli.execute(
                          "publish",
                          "--bootstrap",
                          kafka.bootstrapServers(),
                          "--targets",
                          targets.toString(),
                          "--pairs",
                          pairs.toString(),
                          "--create-topics",
                          "--topic-prefix",
                          "p.")));
      assertTrue(
          json.contains("\"targets_published\": 3") && json.contains("\"pairs_published\": 2"),
          json);
      assertTrue(
          json.contains("\"p.targets_end_offsets_total\": 3")
              && json.contains("\"p.pairs_end_offsets_total\": 2"),
          json);
      assertEquals(
          List.of("q:bash#0", "q:zsh#0"),
          read(kafka, "p.pairs", TrainingPair.class).stream()
              .map(TrainingPair::getPairId)
              .sorted()
              .toList());
      assertEquals(
          new TreeSet<>(List.of("bash", "fish", "zsh")),
          new TreeSet<>(
              read(kafka, "p.targets", Target.class).stream().map(Target::getTargetId).toList()));

      // The same file again: its pairs are on the topic, so none is sent twice.
      String again = publishPairs(kafka, pairs, "0");
      assertTrue(
          again.contains("\"pairs_published\": 0")
              && again.contains("\"pairs_already_published\": 2")
              && again.contains("\"p.pairs_end_offsets_total\": 2"),
          again);
      // Another pass is another epoch: new ids.
      String next = publishPairs(kafka, pairs, "1");
      assertTrue(
          next.contains("\"pairs_published\": 2")
              && next.contains("\"pairs_already_published\": 0"),
          next);
      assertEquals(
          List.of("q:bash#0", "q:bash#1", "q:zsh#0", "q:zsh#1"),
          read(kafka, "p.pairs", TrainingPair.class, 4).stream()
              .map(TrainingPair::getPairId)
              .sorted()
              .toList());
    }
  }

  private static String publishPairs(EmbeddedKafkaBroker kafka, Path pairs, String pass) {
    return stdout(
        () ->
            assertEquals(
                0,
                DynnibalCli.execute(
                    "publish",
                    "--bootstrap",
                    kafka.bootstrapServers(),
                    "--pairs",
                    pairs.toString(),
                    "--pass",
                    pass,
                    "--topic-prefix",
                    "p.")));
  }

  @Test
  void nothingToPublishIsAUsageError() {
    assertEquals(2, DynnibalCli.execute("publish", "--bootstrap", "127.0.0.1:1"));
  }

  private static <T extends org.apache.avro.specific.SpecificRecordBase> List<T> read(
      EmbeddedKafkaBroker kafka, String topic, Class<T> type) {
    return read(kafka, topic, type, 2);
  }

  private static <T extends org.apache.avro.specific.SpecificRecordBase> List<T> read(
      EmbeddedKafkaBroker kafka, String topic, Class<T> type, int atLeast) {
    List<T> out = new ArrayList<>();
    try (TopicReader<T> reader = new TopicReader<>(kafka.clientProperties(), topic, type)) {
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (System.nanoTime() < deadline && out.size() < atLeast) {
        out.addAll(reader.poll(Duration.ofMillis(300)));
      }
      out.addAll(reader.poll(Duration.ofMillis(500)));
    }
    return out;
  }

  private static String stdout(Runnable action) {
    PrintStream original = System.out;
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
    try {
      action.run();
    } finally {
      System.setOut(original);
    }
    return buffer.toString(StandardCharsets.UTF_8).trim();
  }
}
