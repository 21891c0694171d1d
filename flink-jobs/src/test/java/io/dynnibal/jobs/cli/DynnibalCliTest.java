package io.dynnibal.jobs.cli;

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
    for (String command : new String[] {"version", "bench", "demo", "publish", "submit", "experiment", "eval"}) {
      assertTrue(help.contains("  " + command + " "), command + " missing from:\n" + help);
    }
  }

  @Test
  void noCommandIsAUsageError() {
    assertEquals(2, DynnibalCli.execute());
  }

  @ParameterizedTest
  @ValueSource(strings = {"demo", "publish", "submit", "experiment", "eval"})
  void plannedCommandsSayTheyAreNotBuiltAndFail(String command) {
    assertEquals(PlannedCommand.NOT_BUILT_YET, DynnibalCli.execute(command, "--any", "flags", "--steps=3"));
  }

  @Test
  void versionNamesTheStackItRunsOn() {
    Map<String, String> versions = VersionCommand.versions();
    assertEquals(
        java.util.List.of("dynnibal", "java", "flink", "kafka", "avro", "djl", "libtorch", "gpu", "device"),
        java.util.List.copyOf(versions.keySet()));
    assertTrue(versions.get("flink").matches("2\\.\\d+\\.\\d+"), versions.toString());
    assertTrue(versions.get("kafka").matches("4\\.\\d+\\.\\d+"), versions.toString());
    assertTrue(versions.get("libtorch").matches("\\d+\\.\\d+\\.\\d+.*"), versions.toString());
  }

  @Test
  void versionAsJsonIsOneObject() {
    String json = captureStdout(() -> assertEquals(0, DynnibalCli.execute("version", "--json"))).trim();
    assertTrue(json.startsWith("{\"dynnibal\": ") && json.endsWith("}"), json);
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

  /** Every benchmark runs end to end on a smoke-sized config and prints one JSON object with its headline figure. */
  @ParameterizedTest
  @ValueSource(strings = {
      "bench index --targets 600 --dim 8 --queries 5 --negatives 8:speedup",
      "bench maintenance --targets 600 --dim 8 --queries 3:speedup_vs_hnsw",
      "bench reencode --targets 600 --landmarks 16 --samples 64:mean_cosine"})
  void benchmarksRunOnASmokeConfig(String commandAndFigure) {
    String[] parts = commandAndFigure.split(":");
    String json = captureStdout(() -> assertEquals(0, DynnibalCli.execute(parts[0].split(" ")))).trim();
    assertTrue(json.startsWith("{") && json.endsWith("}"), json);
    assertTrue(json.contains("\"" + parts[1] + "\": "), parts[1] + " missing from " + json);
  }
}
