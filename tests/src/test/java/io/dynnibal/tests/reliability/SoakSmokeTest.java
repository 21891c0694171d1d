package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.bench.soak.Fault;
import io.dynnibal.bench.soak.Soak;
import io.dynnibal.bench.soak.SoakReport;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.local.Corpus;
import io.dynnibal.tests.harness.TrainingJobs;
import io.dynnibal.tests.harness.WorkDirs;
import io.dynnibal.tests.training.SyntheticCorpus;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code dynnibal soak} with a smoke configuration: a small corpus and model, 90 s of faults 15 s
 * apart on the real processes. Every kind of fault is injected once and the audit finds every
 * published pair trained exactly once, every bad record dead-lettered (the 15-minute run at the
 * demo's settings: docs/benchmarks.md). When the soak fails or times out, the failure carries its
 * log: surefire keeps a test's own output in a file that a CI summary does not show.
 */
class SoakSmokeTest {
  @Test
  @Timeout(420)
  void everyFaultOnceAndTheAuditFindsNothingLostOrRepeated() throws Exception {
    Path work = WorkDirs.fresh("soak").toAbsolutePath();
    SyntheticCorpus synthetic = new SyntheticCorpus(150, 300, 6, 4, 43);
    Corpus corpus = new Corpus("synthetic", synthetic.targets, synthetic.train, synthetic.eval);
    TrainingJobConfig config = TrainingJobs.smallConfig("unset:9092", work, "soak");
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    PrintStream log = new PrintStream(new Both(System.err, captured), true, StandardCharsets.UTF_8);
    SoakReport report;
    try {
      report =
          Soak.run(
              new Soak.Options(
                  corpus,
                  config,
                  Duration.ofSeconds(90),
                  Duration.ofSeconds(15),
                  20,
                  "2g",
                  work,
                  // Recoveries take 4-47 s here, loaded or not: a stage stuck for longer fails with
                  // its state, before the test's timeout hides it.
                  Duration.ofSeconds(150),
                  16),
              log);
    } catch (Exception | AssertionError e) {
      throw new AssertionError(
          "the soak failed; its log:\n" + captured.toString(StandardCharsets.UTF_8), e);
    }

    assertEquals(0, report.lost(), "lost pairs: " + report.figures());
    assertEquals(0, report.duplicated(), "pairs trained twice: " + report.figures());
    assertEquals(0, report.trainedNotPublished(), report.figures().toString());
    assertTrue(report.pairsPublished() > 0);
    assertEquals(report.pairsPublished(), report.pairsTrained());
    assertTrue(
        report.faultsInjected() >= Fault.values().length,
        "every kind of fault once: " + report.figures());
    assertEquals(report.badRecordsPublished(), report.pairsDeadLettered(), "bad records");
    assertTrue(
        report.restores() >= 3,
        "the TaskManager's kill and pause and the drill restart the job: " + report.figures());
    assertTrue(
        report.faults().stream()
            .filter(f -> !f.fault().equals(Fault.BAD_RECORDS.name()))
            .allMatch(f -> f.recoverySeconds() != null),
        "training went on after every fault: " + report.faults());
  }

  /** Writes to two streams. */
  private static final class Both extends OutputStream {
    private final OutputStream first;
    private final OutputStream second;

    Both(OutputStream first, OutputStream second) {
      this.first = first;
      this.second = second;
    }

    @Override
    public synchronized void write(int b) throws java.io.IOException {
      first.write(b);
      second.write(b);
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) throws java.io.IOException {
      first.write(b, off, len);
      second.write(b, off, len);
    }

    @Override
    public void flush() throws java.io.IOException {
      first.flush();
      second.flush();
    }
  }
}
