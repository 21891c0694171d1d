package io.dynnibal.bench.soak;

import io.dynnibal.deploy.CleanupOnExit;
import io.dynnibal.deploy.FlinkCluster;
import io.dynnibal.deploy.FlinkClusterClient;
import io.dynnibal.deploy.JobSubmission;
import io.dynnibal.deploy.KafkaBroker;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.kafka.TopicReader;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.local.Corpus;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.schemas.TrainingMetrics;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.Properties;

/**
 * A long run on the real processes with faults injected on a schedule, ending with the audit of
 * every pair: the broker ({@code kafka start}) and a supervised cluster of two TaskManagers ({@code
 * cluster start}) under one directory, the training job submitted to it, training pairs published
 * in whole batches as it keeps up, and every {@code faultEvery} the next fault of {@link Fault}'s
 * cycle. At the end publishing stops, the job finishes what was published, and the committed
 * metrics are read back: each published pair id must appear in exactly one committed step.
 *
 * <p>Publishing pauses while the broker is down: the publisher is not what is under test, and a
 * pair it could not be sure it published would blur the audit.
 */
public final class Soak {
  /**
   * @param length how long faults are injected (the drain that follows is not counted)
   * @param faultEvery time between faults
   * @param backlogBatches publish while fewer batches than this wait to be trained
   * @param stallLimit how long any stage may go without progress (the first step after submission,
   *     a committed step after a fault, the drain after the last fault) before the soak stops with
   *     what it knows: a stall is a finding, and the report names the stage
   * @param snapshotDiskMegabytes the size of the tmpfs that holds the model versions (the disk the
   *     full-disk fault fills): room for a few versions of the job's model
   */
  public record Options(
      Corpus corpus,
      TrainingJobConfig job,
      Duration length,
      Duration faultEvery,
      int backlogBatches,
      String taskManagerMemory,
      Path workDir,
      Duration stallLimit,
      int snapshotDiskMegabytes) {}

  private final Options options;
  private final PrintStream log;
  private final TrainingJobConfig config;
  private final Path kafkaDir;
  private final Path clusterDir;
  private final Path drillFile;
  private final long started = System.nanoTime();
  private int kafkaPort;
  private int controllerPort;
  private boolean filled;
  private PairLedger pairs;
  private final FaultRecoveries injected = new FaultRecoveries(this::seconds, m -> log("%s", m));
  private TrainingMetrics last;
  private long lastStepAt = System.nanoTime(); // when the committed step last advanced
  private FlinkClusterClient rest;
  private String job;
  private FaultInjector injector;

  private Soak(Options options, PrintStream log) {
    this.options = options;
    this.log = log;
    this.config = options.job();
    this.kafkaDir = options.workDir().resolve("kafka");
    this.clusterDir = options.workDir().resolve("cluster");
    this.drillFile = options.workDir().resolve("fault-drill");
  }

  /** Runs the soak; the servers are stopped at the end, its directory is kept. */
  public static SoakReport run(Options options, PrintStream log) throws Exception {
    return new Soak(options, log).run();
  }

  private SoakReport run() throws Exception {
    Files.createDirectories(options.workDir());
    kafkaPort = freePort();
    controllerPort = freePort();
    // The servers run in sessions of their own: an interrupted soak stops them here.
    CleanupOnExit interrupted = CleanupOnExit.register(this::stopServers);
    try {
      KafkaBroker.Status broker =
          KafkaBroker.start(kafkaDir, kafkaPort, controllerPort, Duration.ofSeconds(90));
      FlinkCluster.Status cluster =
          FlinkCluster.start(
              clusterDir,
              new FlinkCluster.Options(
                  freePort(),
                  freePort(),
                  2,
                  1,
                  options.taskManagerMemory(),
                  "1g",
                  freePort(),
                  true),
              Duration.ofSeconds(180));
      log(
          "broker pid %d at %s; cluster: jobmanager pid %d, taskmanagers %s, supervisor pid %d",
          broker.pid(),
          broker.bootstrap(),
          cluster.jobManagerPid(),
          cluster.taskManagerPids(),
          cluster.supervisorPid());
      SmallDisk.Result disk =
          SmallDisk.mount(
              options.workDir().resolve("snapshot-disk"), options.snapshotDiskMegabytes());
      if (disk.disk() != null) {
        config.job.snapshotDir = disk.disk().path().resolve("snapshots").toString();
      }
      config.kafka.bootstrapServers = broker.bootstrap();
      config.job.faultDrillFile = drillFile.toString();
      config.job.parallelism = 2; // a slot on each TaskManager: every kill takes half the job
      config.job.maxSteps = 0;
      config.validate();
      Properties kafka = config.clientProperties();
      pairs = new PairLedger(kafka, config.pairsTopic(), options.corpus());
      injector =
          new FaultInjector(
              clusterDir,
              kafkaDir,
              kafkaPort,
              controllerPort,
              drillFile,
              pairs,
              disk,
              options.faultEvery().multipliedBy(3).dividedBy(4),
              m -> log("%s", m));
      JobTopics.createMissing(kafka, config, 2, (short) 1);
      try (CorpusPublisher publisher = new CorpusPublisher(kafka)) {
        publisher.publishTargets(config.targetsTopic(), options.corpus().targets(), null);
      }
      try (FlinkClusterClient client = new FlinkClusterClient(cluster.restUrl())) {
        rest = client;
        JobSubmission.useClusterDirectories(rest, config, false, disk.disk() != null);
        job = JobSubmission.submit(rest, config, null, false);
        log(
            "job %s submitted; faults every %d s for %d min",
            job, options.faultEvery().toSeconds(), options.length().toMinutes());
        soak(kafka);
        long restores = rest.restarts(job);
        SoakReport report =
            pairs.audit(config, injected.all(), restores, seconds(), m -> log("%s", m));
        rest.cancel(job);
        return report;
      }
    } finally {
      interrupted.close();
      stopServers();
      if (injector != null) {
        injector.close();
      }
    }
  }

  private void stopServers() {
    try {
      FlinkCluster.stop(clusterDir, Duration.ofSeconds(30));
    } catch (Exception e) {
      log("stopping the cluster: %s", e);
    }
    try {
      KafkaBroker.stop(kafkaDir, Duration.ofSeconds(30));
    } catch (Exception e) {
      log("stopping the broker: %s", e);
    }
  }

  /** Publishes, injects faults, follows the metrics; then drains what was published. */
  private void soak(Properties kafka) throws Exception {
    long nextLine = System.nanoTime();
    int faults = 0;
    try (TopicReader<TrainingMetrics> metrics =
        new TopicReader<>(kafka, config.metricsTopic(), TrainingMetrics.class)) {
      // The clock starts with training: indexing the targets comes first and is not soaked.
      long indexingSince = System.nanoTime();
      while (step() == 0) {
        follow(metrics);
        if (backlog() < options.backlogBatches()) {
          publishChunk();
        }
        if (System.nanoTime() >= nextLine) {
          log("indexing the targets; job %s", rest.jobState(job));
          nextLine = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        }
        if (System.nanoTime() - indexingSince > options.stallLimit().toNanos()) {
          throw stalled("no training step within " + options.stallLimit());
        }
      }
      log("training started; faults begin");
      long end = System.nanoTime() + options.length().toNanos();
      long nextFault = System.nanoTime() + options.faultEvery().toNanos();
      // Faults go on past the end until each kind has been injected once: on a loaded machine
      // recoveries are slower and fewer faults fit in a short soak.
      long faultingEnded = 0;
      while (System.nanoTime() < end || faults < Fault.values().length || !drained()) {
        follow(metrics);
        boolean faulting = System.nanoTime() < end || faults < Fault.values().length;
        if (!faulting && faultingEnded == 0) {
          faultingEnded = System.nanoTime();
        }
        // Publishing goes on while a fault is unrecovered: a freed disk shows recovery by a model
        // update, which takes steps.
        if ((faulting || !recovered()) && backlog() < options.backlogBatches()) {
          publishChunk();
        }
        if (!faulting && !filled && recovered()) {
          fillLastBatch();
        }
        if (injector.keepDiskFull()) {
          injected.diskFreed(System.currentTimeMillis(), modelVersion());
          log(
              "the model versions' disk is free again at step %d (model version %d)",
              step(), modelVersion());
        }
        if (faulting && System.nanoTime() >= nextFault && recovered()) {
          inject(Fault.values()[faults++ % Fault.values().length]);
          nextFault = System.nanoTime() + options.faultEvery().toNanos();
        }
        if (System.nanoTime() >= nextLine) {
          log(
              "step %d, %,d pairs published, %d faults, job %s",
              step(), published(), injected.size(), rest.jobState(job));
          nextLine = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        }
        Optional<InjectedFault> stuck = injected.unrecoveredAfter(options.stallLimit().toSeconds());
        if (stuck.isPresent()) {
          InjectedFault f = stuck.get();
          throw stalled(
              String.format(
                  "%s at %.0f s (step %d) not recovered within %s (Flink recorded %s)",
                  f.fault(),
                  f.atSeconds(),
                  f.stepAtFault(),
                  options.stallLimit(),
                  f.sinceEpochMs() > 0 ? "its failure" : "no failure since it"));
        }
        if (!faulting
            && System.nanoTime() - Math.max(faultingEnded, lastStepAt)
                > options.stallLimit().toNanos()) {
          throw stalled(
              "the drain after the last fault: no step committed for " + options.stallLimit());
        }
      }
    }
  }

  private void follow(TopicReader<TrainingMetrics> metrics) throws Exception {
    if (injected.awaitingFailure()) {
      injected.latestFailure(rest.latestFailureTime(job));
    }
    for (TrainingMetrics m : metrics.poll(Duration.ofMillis(300))) {
      if (last == null || m.getStep() > last.getStep()) {
        lastStepAt = System.nanoTime();
      }
      last = m;
      injected.committed(m);
    }
  }

  private boolean recovered() {
    return injected.allRecovered();
  }

  /** Training pairs published so far (each pair id once). */
  private long published() {
    return pairs.published();
  }

  private boolean drained() {
    return recovered()
        && filled
        && step() * config.training.batchSize >= published() + pairs.slotTakers();
  }

  /**
   * Completes the last batch: the batch assembler trains whole batches only, and pairs naming
   * unknown targets take places in batches before the trainer dead-letters them.
   */
  private void fillLastBatch() {
    int missing =
        (int)
            ((config.training.batchSize
                    - (published() + pairs.slotTakers()) % config.training.batchSize)
                % config.training.batchSize);
    if (missing > 0) {
      pairs.publish(missing);
      log("the last batch filled with %d pairs; %,d published in all", missing, published());
    }
    filled = true;
  }

  private long modelVersion() {
    return last == null ? 0 : last.getModelVersion();
  }

  private long step() {
    return last == null ? 0 : last.getStep();
  }

  private long backlog() {
    return published() / config.training.batchSize - step();
  }

  /** A few whole batches of the training pairs, in corpus order, each pair id new. */
  private void publishChunk() {
    pairs.publish(4 * config.training.batchSize);
  }

  private void inject(Fault fault) throws Exception {
    long atStep = step();
    double at = seconds();
    long atEpochMs = System.currentTimeMillis();
    if (injector.inject(fault, atStep, "bad" + injected.size())) {
      // The broker's kill is the disruption itself (the job may ride it out without failing), a
      // full disk's end is its freeing; for the others it is the failure Flink records.
      long since = fault == Fault.BROKER_KILL ? atEpochMs : 0;
      injected.add(
          new InjectedFault(fault.name(), at, atEpochMs, since, atStep, modelVersion(), null));
    }
  }

  /** The soak's end when a stage makes no progress: what it waited for and where things stood. */
  private IllegalStateException stalled(String what) {
    String state =
        String.format(
            "%s: step %d of %d published batches, %d faults injected, job %s, %s restarts;"
                + " latest failure: %s",
            what,
            step(),
            (published() + pairs.slotTakers()) / config.training.batchSize,
            injected.size(),
            orUnknown(() -> rest.jobState(job)),
            orUnknown(() -> rest.restarts(job)),
            orUnknown(() -> rest.latestFailure(job).orElse("none")));
    log("stalled: %s", state);
    log("logs: %s", clusterDir.resolve("log"));
    return new IllegalStateException(state);
  }

  /** A REST answer for a report, or why there is none (a stalled cluster may not answer). */
  private static String orUnknown(java.util.concurrent.Callable<Object> ask) {
    try {
      return String.valueOf(ask.call());
    } catch (Exception e) {
      return "unknown (" + e + ")";
    }
  }

  private double seconds() {
    return (System.nanoTime() - started) / 1e9;
  }

  private void log(String format, Object... args) {
    log.printf("[soak %4.0f s] %s%n", seconds(), String.format(format, args));
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
