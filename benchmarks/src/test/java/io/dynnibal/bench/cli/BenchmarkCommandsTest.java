package io.dynnibal.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.dynnibal.bench.scale.SyntheticCorpus;
import io.dynnibal.cli.DynnibalCli;
import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.local.Corpus;
import io.dynnibal.model.TowerKind;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/**
 * The harness's commands on {@code dynnibal}: found through {@link BenchmarkCommands}, answering
 * --help, and each benchmark end to end on a smoke-sized config.
 */
class BenchmarkCommandsTest {

  @Test
  void helpListsTheHarnessCommandsBeforeHelp() {
    String help = succeeds("--help");
    for (String command : new String[] {"bench", "experiment", "soak"}) {
      assertTrue(help.contains("  " + command + " "), command + " missing from:\n" + help);
      assertTrue(help.indexOf("  " + command + " ") < help.indexOf("  help "), help);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"bench", "bench index", "bench tower-reencode", "experiment", "soak"})
  void everyCommandAnswersHelp(String command) {
    String help = succeeds((command + " --help").split(" "));
    assertTrue(help.startsWith("Usage: dynnibal " + command), help);
  }

  /** picocli lists a command by its description's first line: each is one whole sentence. */
  @Test
  void everyCommandsSummaryIsOneSentence() {
    CommandLine bench = new CommandLine(new BenchCommand());
    List<CommandLine> commands = new java.util.ArrayList<>(bench.getSubcommands().values());
    commands.add(bench);
    commands.add(new CommandLine(new ExperimentCommand()));
    commands.add(new CommandLine(new SoakCommand()));
    for (CommandLine c : commands) {
      String first = c.getCommandSpec().usageMessage().description()[0];
      assertTrue(
          Character.isUpperCase(first.charAt(0)) && first.endsWith("."),
          c.getCommandName() + ": " + first);
      assertTrue(first.length() <= 115, c.getCommandName() + " is too long: " + first);
    }
  }

  @Test
  void theExperimentsTransformerSettingsAreValidAndKeepTheCacheSmall() throws Exception {
    TrainingJobConfig config =
        TrainingJobConfig.load(null, ExperimentSettings.transformer()).validate();
    assertEquals(TowerKind.TRANSFORMER, config.model().towerKind());
    assertEquals(384, config.model().outputDim());
    Map<String, String> settings = config.toProperties();
    // A pretrained encoder's space needs most of its dimensions in the cache (docs/findings.md).
    assertEquals("256", settings.get("landmarks"), "d' = 256 of d = 384");
    assertEquals("544", settings.get("regression.samples"), "s' at least 2 d'");
    assertEquals("0", settings.get("fidelity.probes"));
    assertEquals(2, DynnibalCli.execute("experiment", "--steps", "1", "--tower", "bert"));
  }

  @Test
  void towerReencodeSizesFitTheTowerUnlessGiven() throws Exception {
    TowerReencodeBenchCommand bag = parsed("--targets", "t", "--train", "p");
    TowerReencodeBenchCommand transformer =
        parsed("--targets", "t", "--train", "p", "--tower", "transformer");
    TowerReencodeBenchCommand given =
        parsed("--targets", "t", "--train", "p", "--tower", "transformer", "--batch", "8");
    Map<String, String> defaults = new TrainingJobConfig().toProperties();
    assertEquals(Integer.parseInt(defaults.get("batch.size")), bag.options().batch());
    assertEquals(TowerReencodeBenchCommand.BAG_WARMUP_STEPS, bag.options().warmupSteps());
    assertEquals(32, transformer.options().batch());
    assertEquals(
        TowerReencodeBenchCommand.TRANSFORMER_WARMUP_STEPS, transformer.options().warmupSteps());
    assertEquals(256, transformer.options().landmarks());
    assertEquals(8, given.options().batch());
  }

  private static TowerReencodeBenchCommand parsed(String... args) {
    TowerReencodeBenchCommand command = new TowerReencodeBenchCommand();
    new CommandLine(command).parseArgs(args);
    return command;
  }

  /** bench trainer and tower-reencode (both towers) on a tiny corpus. */
  @Test
  void theTrainerBenchmarksRunOnATinyCorpus(@TempDir Path dir) throws IOException {
    SyntheticCorpus corpus = SyntheticCorpus.shapedLike(Corpus.bundledDebian().targets(), 3);
    Path targets = dir.resolve("targets.jsonl");
    Path queries = dir.resolve("queries.jsonl");
    ObjectMapper json = new ObjectMapper();
    StringBuilder lines = new StringBuilder();
    for (TargetText t : corpus.targets(40)) {
      lines.append(
          json.writeValueAsString(Map.of("target_id", t.targetId(), "target_text", t.text())));
      lines.append('\n');
    }
    Files.writeString(targets, lines);
    lines.setLength(0);
    for (LabelledQuery q : corpus.queries(0, 40, 40)) {
      lines.append(
          json.writeValueAsString(
              Map.of("query_id", q.queryId(), "query_text", q.text(), "target_id", q.targetId())));
      lines.append('\n');
    }
    Files.writeString(queries, lines);
    String bench =
        succeeds(
            "bench",
            "trainer",
            "--targets",
            targets.toString(),
            "--train",
            queries.toString(),
            "--batch",
            "8",
            "--sampled",
            "2",
            "--uniform",
            "2",
            "--steps",
            "3");
    assertTrue(
        bench.contains("\"steps_per_s\": ") && bench.contains("\"encode_all_targets_s\": "), bench);
    String reencode =
        succeeds(
            "bench",
            "tower-reencode",
            "--targets",
            targets.toString(),
            "--train",
            queries.toString(),
            "--warmup-steps",
            "2",
            "--steps",
            "2",
            "--landmarks",
            "4",
            "--samples",
            "16",
            "--batch",
            "8");
    assertTrue(
        reencode.contains("\"mean_cosine\": ") && reencode.contains("\"speedup\": "), reencode);
    // The pretrained transformer with its bottom five layers and embeddings frozen.
    String transformer =
        succeeds(
            "bench",
            "tower-reencode",
            "--tower",
            "transformer",
            "--trainable-layers",
            "1",
            "--max-tokens",
            "16",
            "--targets",
            targets.toString(),
            "--train",
            queries.toString(),
            "--warmup-steps",
            "1",
            "--steps",
            "1",
            "--landmarks",
            "4",
            "--samples",
            "16",
            "--batch",
            "8");
    assertTrue(
        transformer.contains("\"tower\": \"transformer\"")
            && transformer.contains("\"mean_cosine\": "),
        transformer);
  }

  /**
   * Every benchmark runs end to end on a smoke-sized config and prints one JSON object with its
   * headline figure.
   */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "bench index --targets 600 --dim 8 --queries 5 --negatives 8:speedup",
        "bench shard-heap --targets 2000 --dim 8:heap_bytes_per_target",
        "bench maintenance --targets 600 --dim 8 --queries 3:speedup_vs_hnsw",
        "bench reencode --targets 600 --landmarks 16 --samples 64:mean_cosine"
      })
  void benchmarksRunOnASmokeConfig(String commandAndFigure) {
    String[] parts = commandAndFigure.split(":");
    String json = succeeds(parts[0].split(" "));
    assertTrue(json.startsWith("{") && json.endsWith("}"), json);
    assertTrue(json.contains("\"" + parts[1] + "\": "), parts[1] + " missing from " + json);
  }

  /** Runs the CLI, expects exit code 0, and returns what it printed (trimmed). */
  private static String succeeds(String... args) {
    PrintStream original = System.out;
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
    try {
      assertEquals(0, DynnibalCli.execute(args));
    } finally {
      System.setOut(original);
    }
    return buffer.toString(StandardCharsets.UTF_8).trim();
  }
}
