package io.dynnibal.tests.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.dynnibal.bench.experiment.Experiment;
import io.dynnibal.bench.experiment.ExperimentReport;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.local.Corpus;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.sampler.Bm25Negatives;
import io.dynnibal.sampler.Samplers;
import io.dynnibal.tests.harness.ListeningSockets;
import io.dynnibal.tests.harness.WorkDirs;
import io.dynnibal.tests.training.SmokeRuns;
import io.dynnibal.tests.training.SyntheticCorpus;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code ./dynnibal experiment}'s code path with a smoke config: every sampler replays the same
 * topics (published once, before any job starts) through its own job on a MiniCluster, against a
 * broker given as {@code --bootstrap} would be; then the table, JSON and chart, and a second
 * experiment that finds the dataset already published.
 */
class ExperimentSmokeTest {
  private static EmbeddedKafkaBroker kafka;
  private static Corpus corpus;
  private static TrainingJobConfig config;
  private static final int STEPS = 40;
  private static final int TARGETS = 120;
  private static final int OUTPUT_DIM = 32;
  private static Experiment.Result result;
  private static String printed;
  private static Path work;

  /** Every address this JVM listened on while the experiment ran. */
  private static Set<InetSocketAddress> listening;

  @BeforeAll
  @Timeout(420)
  static void runEverySampler() throws Exception {
    SyntheticCorpus synthetic = new SyntheticCorpus(TARGETS, 240, 8, 4, 5);
    corpus = new Corpus("synthetic", synthetic.targets, synthetic.train, synthetic.eval);
    config =
        SmokeRuns.config(
            "exp-smoke",
            "model.output.dim=" + OUTPUT_DIM,
            "checkpoint.interval=300ms",
            "snm.pool.fraction=0.25",
            "negative.cache.size=30",
            "fidelity.probes=2");
    work = WorkDirs.fresh("experiment-smoke");
    kafka = EmbeddedKafkaBroker.start(work.resolve("kafka"));
    ByteArrayOutputStream console = new ByteArrayOutputStream();
    ListeningSockets.Watch sockets = ListeningSockets.watch(ProcessHandle.current().pid());
    try (PrintStream out = new PrintStream(console, true, StandardCharsets.UTF_8)) {
      result =
          Experiment.run(
              new Experiment.Options(
                  corpus, config, Samplers.NAMES, 1, STEPS, 2, 0, work, kafka.bootstrapServers()),
              out);
    } finally {
      listening = sockets.stop();
    }
    printed = console.toString(StandardCharsets.UTF_8);
  }

  @Test
  void everyServerOfTheRunListensOnLoopbackOnly() {
    assertTrue(listening.size() >= 2, "the broker and the MiniCluster listen: " + listening);
    assertEquals(List.of(), ListeningSockets.beyondLoopback(listening), "listening: " + listening);
  }

  @AfterAll
  static void stopBroker() {
    if (kafka != null) {
      kafka.close();
    }
  }

  @Test
  @Timeout(120)
  void aSecondExperimentReplaysTheTopicsPublishedByTheFirst() throws Exception {
    ByteArrayOutputStream console = new ByteArrayOutputStream();
    Experiment.Result again;
    try (PrintStream out = new PrintStream(console, true, StandardCharsets.UTF_8)) {
      again =
          Experiment.run(
              new Experiment.Options(
                  corpus,
                  config,
                  List.of("uniform"),
                  1,
                  STEPS,
                  1,
                  0,
                  work.resolve("again"),
                  kafka.bootstrapServers()),
              out);
    }
    String second = console.toString(StandardCharsets.UTF_8);
    assertTrue(second.contains("published before") && !second.contains("publishing "), second);
    assertEquals(STEPS, again.runs().get(0).steps());
    assertEquals(0, again.runs().get(0).pairsDeadLettered(), second);
  }

  @Test
  void everySamplerTrainsTheWholeBudgetOnTheSameReplayWithNoPairLost() {
    assertEquals(
        Samplers.NAMES, result.runs().stream().map(Experiment.Run::sampler).toList(), printed);
    for (Experiment.Run run : result.runs()) {
      assertEquals(STEPS, run.steps(), run.sampler());
      // The pairs were on their topic before each job started: none may meet a half-loaded index.
      assertEquals(0, run.pairsDeadLettered(), run.sampler() + " dead-lettered pairs\n" + printed);
    }
    assertEquals(
        1,
        printed.split("publishing ", -1).length - 1,
        "the dataset is published once\n" + printed);
  }

  @Test
  void memPercentIsWhatEachSamplerHoldsAtFullDimension() {
    Map<String, Double> mem =
        result.runs().stream()
            .collect(Collectors.toMap(Experiment.Run::sampler, Experiment.Run::memPercent));
    assertEquals(0.0, mem.get("in-batch"));
    assertEquals(0.0, mem.get("uniform"));
    assertEquals(0.0, mem.get("bm25")); // its index lives in the shards, not on the accelerator
    assertEquals(100.0, mem.get("exhaustive"), 1e-9);
    // Each shard pools ceil(25 % of its targets).
    assertEquals(25.0, mem.get("stochastic-negative-mining"), 2.0);
    assertEquals(100.0 * 30 / TARGETS, mem.get("negative-cache"), 1e-9);
    double dynnibal = 100.0 * ((16 + 64) * OUTPUT_DIM + 16 * 16) / (TARGETS * OUTPUT_DIM);
    assertEquals(dynnibal, mem.get("dynnibal-mh"), 1e-9);
    assertEquals(dynnibal, mem.get("dynnibal-rejection"), 1e-9);
    assertEquals(dynnibal, mem.get("exact-cache"), 1e-9); // the same caches, scored exhaustively
  }

  @Test
  void hardNegativeSamplersLearn() {
    for (Experiment.Run run : result.runs()) {
      double untrained = run.curve().get(0).value();
      assertTrue(run.metrics().recallAt(10) > 0.5, run.sampler() + " " + run.metrics().figures());
      assertTrue(
          run.curve().get(run.curve().size() - 1).value() > untrained,
          run.sampler() + " curve " + run.curve());
    }
  }

  @Test
  void samplersThatMineTheShardsReportTheirFidelityToExactMining() {
    for (Experiment.Run run : result.runs()) {
      // The synthetic queries share no word with any target: BM25 has nothing to offer them.
      boolean mines =
          Samplers.of(run.sampler()).shardsMine() && !run.sampler().equals(Bm25Negatives.ID);
      if (!mines) {
        assertTrue(run.fidelity().isEmpty(), run.sampler() + " mines nothing: " + run.fidelity());
        continue;
      }
      double mass = run.fidelity().getOrDefault("mass_ratio", Double.NaN);
      double overlap = run.fidelity().getOrDefault("overlap_topk", Double.NaN);
      assertTrue(mass > 0 && overlap >= 0 && overlap <= 1, run.sampler() + " " + run.fidelity());
    }
    assertTrue(printed.contains("fidelity overlap"), printed);
  }

  @Test
  void jsonHasTheShapeOtherToolsRead() throws Exception {
    Path json = work.resolve("figures.json");
    ExperimentReport.writeJson(result, json);
    JsonNode root = new ObjectMapper().readTree(json.toFile());
    assertEquals(TARGETS, root.get("dataset").get("targets").asInt());
    assertEquals(String.valueOf(STEPS), root.get("config").get("max.steps").asText());
    JsonNode first = root.get("samplers").get(0);
    for (String field :
        List.of(
            "name",
            "seed",
            "mem_percent",
            "recall",
            "mrr",
            "steps",
            "steps_per_s",
            "wall_s",
            "fidelity")) {
      assertTrue(first.has(field), field + " missing in " + first);
    }
    for (String k : List.of("1", "5", "10", "20", "100")) {
      assertTrue(first.get("recall").get(k).isNumber(), "recall@" + k);
    }
    assertTrue(first.get("mrr").get("10").isNumber() && first.get("mrr").get("100").isNumber());
    assertEquals(Samplers.NAMES.size(), root.get("samplers").size());
  }

  @Test
  void tableAndChartShowEverySampler() throws Exception {
    String table = ExperimentReport.table(result);
    for (String sampler : Samplers.NAMES) {
      assertTrue(table.contains(sampler), sampler + " missing:\n" + table);
    }
    // Streaming runs are timing-dependent: on a 120-query smoke run uniform and exhaustive can tie
    // exactly, and then there is no gap to share (this happened once in CI).
    assertEquals(
        !ExperimentReport.gapClosed(result.runs()).isEmpty(),
        table.contains("share of the R@1 gap"),
        table);
    assertTrue(table.contains("bm25 (no training)"), "the lexical baseline is shown:\n" + table);
    // The synthetic queries share no word with their targets: only training can solve them.
    assertEquals(0.0, result.bm25().recallAt(100), "BM25 cannot, on the same queries");
    Path png = work.resolve("curves.png");
    ExperimentReport.writePlot(result, png);
    BufferedImage image = ImageIO.read(png.toFile());
    assertEquals(960, image.getWidth());
  }
}
