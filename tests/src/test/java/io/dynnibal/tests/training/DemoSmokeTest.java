package io.dynnibal.tests.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.local.Corpus;
import io.dynnibal.local.Demo;
import io.dynnibal.tests.harness.ListeningSockets;
import io.dynnibal.tests.harness.WorkDirs;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code ./dynnibal demo}'s code path with a smoke config: its own in-process broker and
 * MiniCluster (not the shared test harness), a small synthetic corpus, the before/after evaluation
 * it prints, and nothing of it listening beyond loopback.
 */
class DemoSmokeTest {
  @Test
  @Timeout(240)
  void theDemoTrainsAndReportsBeforeAndAfter() throws Exception {
    SyntheticCorpus synthetic = new SyntheticCorpus(120, 240, 8, 4, 5);
    Corpus corpus = new Corpus("synthetic", synthetic.targets, synthetic.train, synthetic.eval);
    TrainingJobConfig config = SmokeRuns.config("smoke");
    Path work = WorkDirs.fresh("demo-smoke");
    ByteArrayOutputStream console = new ByteArrayOutputStream();
    Demo.Result result;
    ListeningSockets.Watch sockets = ListeningSockets.watch(ProcessHandle.current().pid());
    Set<InetSocketAddress> listening;
    try (PrintStream out = new PrintStream(console, true, StandardCharsets.UTF_8)) {
      result = Demo.run(new Demo.Options(corpus, config, 3, 0, 0, work, 3), out);
    } finally {
      listening = sockets.stop();
    }
    assertTrue(listening.size() >= 2, "the broker and the MiniCluster listen: " + listening);
    assertEquals(List.of(), ListeningSockets.beyondLoopback(listening), "listening: " + listening);
    String printed = console.toString(StandardCharsets.UTF_8);
    int steps = 3 * (synthetic.train.size() / 16);
    assertEquals(steps, result.steps(), printed);
    // Not a terminal here: progress comes as plain lines, the last one at the end of training.
    assertTrue(printed.contains("\ntraining  " + steps + "/" + steps + "  loss "), printed);
    assertTrue(!printed.contains("\r"), "no carriage returns outside a terminal");
    assertTrue(
        result.after().recallAt(10) > result.before().recallAt(10) + 0.2,
        result.before().figures() + " -> " + result.after().figures());
    // 90 tiny steps take a second or two, less than a round trip of a model update: only emission
    // is checked here (StreamingTrainingJobTest paces its input to see cycles complete).
    assertTrue(
        result.last().getModelVersion() >= 1, "no model update emitted in " + steps + " steps");
    assertTrue(result.checkpointBytes() > 0, "no retained checkpoint");
    assertEquals(0, result.deadLetters());
  }
}
