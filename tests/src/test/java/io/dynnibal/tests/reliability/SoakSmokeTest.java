package io.dynnibal.tests.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.local.Corpus;
import io.dynnibal.soak.Soak;
import io.dynnibal.tests.harness.TrainingJobs;
import io.dynnibal.tests.training.SyntheticCorpus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code dynnibal soak} with a smoke configuration: a small corpus and model, 90 s of faults 15 s
 * apart on the real processes. Every kind of fault is injected once and the audit finds every
 * published pair trained exactly once, every bad record dead-lettered (the 15-minute run at the
 * demo's settings: the README).
 */
class SoakSmokeTest {
  @Test
  @Timeout(420)
  void everyFaultOnceAndTheAuditFindsNothingLostOrRepeated() throws Exception {
    Path work =
        Files.createDirectories(
                Path.of(System.getProperty("dynnibal.test.workdir", "target/test-work"))
                    .resolve("soak-" + System.nanoTime()))
            .toAbsolutePath();
    SyntheticCorpus synthetic = new SyntheticCorpus(150, 300, 6, 4, 43);
    Corpus corpus = new Corpus("synthetic", synthetic.targets, synthetic.train, synthetic.eval);
    TrainingJobConfig config = TrainingJobs.smallConfig("unset:9092", work, "soak");
    Soak.Report report =
        Soak.run(
            new Soak.Options(
                corpus, config, Duration.ofSeconds(90), Duration.ofSeconds(15), 20, "2g", work),
            System.err);

    assertEquals(0, report.lost(), "lost pairs: " + report.figures());
    assertEquals(0, report.duplicated(), "pairs trained twice: " + report.figures());
    assertEquals(0, report.trainedNotPublished(), report.figures().toString());
    assertTrue(report.pairsPublished() > 0);
    assertEquals(report.pairsPublished(), report.pairsTrained());
    assertTrue(
        report.faultsInjected() >= Soak.Fault.values().length,
        "every kind of fault once: " + report.figures());
    assertEquals(report.badRecordsPublished(), report.pairsDeadLettered(), "bad records");
    assertTrue(report.restores() >= 2, "the TaskManager kill and the drill restart the job");
    assertTrue(
        report.faults().stream()
            .filter(f -> !f.fault().equals(Soak.Fault.BAD_RECORDS.name()))
            .allMatch(f -> f.recoverySeconds() != null),
        "training went on after every fault: " + report.faults());
  }
}
