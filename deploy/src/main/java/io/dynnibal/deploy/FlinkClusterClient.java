package io.dynnibal.deploy;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.client.deployment.StandaloneClusterId;
import org.apache.flink.client.program.PackagedProgram;
import org.apache.flink.client.program.PackagedProgramUtils;
import org.apache.flink.client.program.ProgramInvocationException;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.SecurityOptions;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.messages.webmonitor.JobDetails;
import org.apache.flink.runtime.rest.handler.legacy.messages.ClusterOverviewWithVersion;
import org.apache.flink.runtime.rest.messages.ClusterConfigurationInfoHeaders;
import org.apache.flink.runtime.rest.messages.ConfigurationInfoEntry;
import org.apache.flink.runtime.rest.messages.EmptyMessageParameters;
import org.apache.flink.runtime.rest.messages.EmptyRequestBody;
import org.apache.flink.runtime.rest.messages.JobExceptionsHeaders;
import org.apache.flink.runtime.rest.messages.JobExceptionsInfoWithHistory;
import org.apache.flink.runtime.rest.messages.JobsOverviewHeaders;
import org.apache.flink.runtime.rest.messages.job.JobExceptionsMessageParameters;
import org.apache.flink.runtime.rest.messages.job.metrics.JobMetricsHeaders;
import org.apache.flink.runtime.rest.messages.job.metrics.JobMetricsMessageParameters;
import org.apache.flink.runtime.rest.messages.job.metrics.MetricCollectionResponseBody;

/**
 * A Flink session cluster as deploying the job sees it, through Flink's own {@link
 * RestClusterClient} (what {@code flink run}, {@code flink list}, {@code flink cancel} and {@code
 * flink stop} use): cluster overview and configuration, job submission, job list and state, the
 * latest failure, cancel, stop with a savepoint.
 *
 * <p>Submission is {@code flink run}'s: the job jar's entry class runs here, in a class loader of
 * its own over the jar ({@link PackagedProgram}), and the job graph it builds goes to the cluster
 * with the jar attached ({@link PackagedProgramUtils#createJobGraph}, {@link
 * RestClusterClient#submitJob}); a savepoint to restore from travels with the graph as its {@link
 * SavepointRestoreSettings}.
 *
 * <p>Errors come back as {@link IllegalStateException}s carrying what Flink said (for a failed
 * submission, the entry class's exception) without the stack frames; an address where nothing
 * answers as an {@link IOException} ({@link FlinkRestFailures}). Close it when done: it holds a
 * connection pool and threads.
 */
public final class FlinkClusterClient implements AutoCloseable {
  /** Queries and polls: a JobManager that takes longer is as good as absent. */
  private static final Duration QUICK = Duration.ofSeconds(10);

  /** Submission: uploading the job jar and the graph. */
  private static final Duration SLOW = Duration.ofMinutes(2);

  /** Terminal job states: its slots are free again. */
  private static final List<String> TERMINAL = List.of("FINISHED", "CANCELED", "FAILED");

  /** {@code GET /overview}. */
  public record Overview(
      int taskManagers, int slotsTotal, int slotsAvailable, int jobsRunning, String flinkVersion) {}

  /** One row of {@code GET /jobs/overview}. */
  public record Job(String id, String name, String state, long startTime, long durationMs) {}

  private final URI base;
  private final RestClusterClient<StandaloneClusterId> client;

  /**
   * A client of the JobManager whose REST API is at {@code base} ({@code http://host:port}, with a
   * path when a proxy serves it under one; {@code https} for a REST API with TLS).
   */
  public FlinkClusterClient(URI base) {
    this.base = base.toString().endsWith("/") ? base : URI.create(base + "/");
    try {
      this.client =
          new RestClusterClient<>(configuration(this.base), StandaloneClusterId.getInstance());
    } catch (Exception e) {
      throw new IllegalStateException("cannot create a REST client for " + this.base, e);
    }
  }

  /**
   * What {@link RestClusterClient} needs to reach {@code base}, and no retries: absent is absent.
   */
  static Configuration configuration(URI base) {
    if (base.getHost() == null) {
      throw new IllegalArgumentException("not a JobManager address: " + base);
    }
    boolean tls = "https".equalsIgnoreCase(base.getScheme());
    Configuration conf = new Configuration();
    conf.set(RestOptions.ADDRESS, base.getHost());
    conf.set(RestOptions.PORT, base.getPort() > 0 ? base.getPort() : tls ? 443 : 80);
    conf.set(SecurityOptions.SSL_REST_ENABLED, tls);
    String path = base.getPath() == null || base.getPath().isEmpty() ? "/" : base.getPath();
    if (!path.equals("/")) {
      conf.set(RestOptions.URL_PREFIX, path.endsWith("/") ? path : path + "/");
    }
    conf.set(RestOptions.RETRY_MAX_ATTEMPTS, 0);
    conf.set(RestOptions.CONNECTION_TIMEOUT, Duration.ofSeconds(5));
    conf.set(RestOptions.IDLENESS_TIMEOUT, SLOW);
    return conf;
  }

  public URI base() {
    return base;
  }

  /** The cluster's overview, or empty when nothing answers at the address. */
  public Optional<Overview> overview() {
    try {
      ClusterOverviewWithVersion o = await(client.getClusterOverview(), QUICK, "GET /overview");
      return Optional.of(
          new Overview(
              o.getNumTaskManagersConnected(),
              o.getNumSlotsTotal(),
              o.getNumSlotsAvailable(),
              o.getNumJobsRunningOrPending(),
              o.getVersion()));
    } catch (IOException | IllegalStateException e) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }

  /** The JobManager's configuration ({@code GET /jobmanager/config}), key by key. */
  public Map<String, String> jobManagerConfig() throws IOException, InterruptedException {
    Map<String, String> config = new TreeMap<>();
    for (ConfigurationInfoEntry entry :
        await(
            client.sendRequest(
                ClusterConfigurationInfoHeaders.getInstance(),
                EmptyMessageParameters.getInstance(),
                EmptyRequestBody.getInstance()),
            QUICK,
            "GET /jobmanager/config")) {
      config.put(entry.getKey(), entry.getValue());
    }
    return config;
  }

  /**
   * Runs {@code entryClass} of {@code jobJar} with {@code args} here to build the job's graph (as
   * {@code flink run} does) and submits the graph with the jar attached.
   *
   * @param parallelism the default parallelism, for operators the entry class leaves unset
   * @param savepoint the savepoint to restore from, or null for a fresh start
   * @return the job id
   */
  public String submit(
      Path jobJar,
      String entryClass,
      List<String> args,
      int parallelism,
      String savepoint,
      boolean allowNonRestoredState)
      throws IOException, InterruptedException {
    SavepointRestoreSettings restore =
        savepoint == null
            ? SavepointRestoreSettings.none()
            : SavepointRestoreSettings.forPath(savepoint, allowNonRestoredState);
    Configuration programConfiguration = new Configuration();
    JobGraph graph;
    try (PackagedProgram program =
        PackagedProgram.newBuilder()
            .setJarFile(jobJar.toFile())
            .setEntryPointClassName(entryClass)
            .setArguments(args.toArray(String[]::new))
            .setConfiguration(programConfiguration)
            .setSavepointRestoreSettings(restore)
            .build()) {
      graph =
          PackagedProgramUtils.createJobGraph(program, programConfiguration, parallelism, false);
    } catch (ProgramInvocationException e) {
      throw new IllegalStateException(
          "building the job graph failed: " + FlinkRestFailures.messages(e));
    }
    return await(client.submitJob(graph), SLOW, "submitting job \"" + graph.getName() + "\"")
        .toHexString();
  }

  /** Every job the cluster knows, newest first. */
  public List<Job> jobs() throws IOException, InterruptedException {
    List<Job> jobs = new ArrayList<>();
    for (JobDetails j :
        await(
                client.sendRequest(
                    JobsOverviewHeaders.getInstance(),
                    EmptyMessageParameters.getInstance(),
                    EmptyRequestBody.getInstance()),
                QUICK,
                "GET /jobs/overview")
            .getJobs()) {
      jobs.add(
          new Job(
              j.getJobId().toHexString(),
              j.getJobName(),
              j.getStatus().name(),
              j.getStartTime(),
              j.getDuration()));
    }
    jobs.sort(Comparator.comparingLong(Job::startTime).reversed());
    return jobs;
  }

  /** When the job's latest failure happened (epoch milliseconds), if it has failed at all. */
  public Optional<Long> latestFailureTime(String jobId) throws IOException, InterruptedException {
    var entries = exceptionHistory(jobId);
    return entries.isEmpty() ? Optional.empty() : Optional.of(entries.get(0).getTimestamp());
  }

  /** How often the job restarted since it was submitted (Flink's {@code numRestarts}). */
  public long restarts(String jobId) throws IOException, InterruptedException {
    JobMetricsMessageParameters parameters = new JobMetricsMessageParameters();
    parameters.jobPathParameter.resolve(id(jobId));
    parameters.metricsFilterParameter.resolve(List.of("numRestarts"));
    // The JobManager fetches metrics lazily: the first request only starts the fetch.
    for (int attempt = 0; ; attempt++) {
      MetricCollectionResponseBody body =
          await(
              client.sendRequest(
                  JobMetricsHeaders.getInstance(), parameters, EmptyRequestBody.getInstance()),
              QUICK,
              "GET /jobs/" + jobId + "/metrics?get=numRestarts");
      var value =
          body.getMetrics().stream()
              .filter(m -> m.getId().equals("numRestarts") && m.getValue() != null)
              .mapToLong(m -> Long.parseLong(m.getValue()))
              .findFirst();
      if (value.isPresent()) {
        return value.getAsLong();
      }
      if (attempt == 20) {
        throw new IllegalStateException("the JobManager reports no numRestarts for job " + jobId);
      }
      Thread.sleep(500);
    }
  }

  /** The job's state: RUNNING, FINISHED, CANCELED, FAILED, ... */
  public String jobState(String jobId) throws IOException, InterruptedException {
    JobStatus status =
        await(client.getJobStatus(id(jobId)), QUICK, "GET /jobs/" + jobId + "/status");
    return status.name();
  }

  /** The job's latest failure (messages only), if it has failed or restarted since it started. */
  public Optional<String> latestFailure(String jobId) throws IOException, InterruptedException {
    var entries = exceptionHistory(jobId);
    return entries.isEmpty()
        ? Optional.empty()
        : Optional.of(FlinkRestFailures.withoutStackFrames(entries.get(0).getStacktrace()));
  }

  /** The job's failures, newest first ({@code GET /jobs/ID/exceptions}). */
  private List<JobExceptionsInfoWithHistory.RootExceptionInfo> exceptionHistory(String jobId)
      throws IOException, InterruptedException {
    JobExceptionsMessageParameters parameters = new JobExceptionsMessageParameters();
    parameters.jobPathParameter.resolve(id(jobId));
    return await(
            client.sendRequest(
                JobExceptionsHeaders.getInstance(), parameters, EmptyRequestBody.getInstance()),
            QUICK,
            "GET /jobs/" + jobId + "/exceptions")
        .getExceptionHistory()
        .getEntries();
  }

  /** Cancels the job without a savepoint (its retained checkpoints stay). */
  public void cancel(String jobId) throws IOException, InterruptedException {
    await(client.cancel(id(jobId)), QUICK, "PATCH /jobs/" + jobId);
  }

  /**
   * Stops the job with a savepoint (sources stop, a final savepoint is taken and the sinks'
   * transactions committed, then the job finishes) and waits for both.
   *
   * @param targetDirectory where to write it, or null for the cluster's {@code
   *     execution.checkpointing.savepoint-dir}
   * @return the savepoint's path, what a resume takes
   */
  public String stopWithSavepoint(String jobId, String targetDirectory, Duration timeout)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    CompletableFuture<String> savepoint =
        client.stopWithSavepoint(id(jobId), false, targetDirectory, SavepointFormatType.CANONICAL);
    String location;
    try {
      location = savepoint.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      savepoint.cancel(true);
      throw new IllegalStateException(
          "the savepoint of job "
              + jobId
              + " did not complete within "
              + timeout.toSeconds()
              + " s");
    } catch (ExecutionException e) {
      if (FlinkRestFailures.ofTheExchange(e)) {
        throw FlinkRestFailures.failure(e, base, "POST /jobs/" + jobId + "/stop");
      }
      throw new IllegalStateException(
          "the savepoint of job " + jobId + " failed: " + FlinkRestFailures.messages(e.getCause()));
    }
    awaitTerminal(jobId, deadline); // its slots are free for the resumed job once it has finished
    return location;
  }

  private void awaitTerminal(String jobId, long deadline) throws IOException, InterruptedException {
    while (!TERMINAL.contains(jobState(jobId)) && System.nanoTime() < deadline) {
      Thread.sleep(200);
    }
  }

  @Override
  public void close() {
    client.close();
  }

  private static JobID id(String jobId) {
    try {
      return JobID.fromHexString(jobId);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("not a Flink job id: " + jobId, e);
    }
  }

  private <T> T await(CompletableFuture<T> future, Duration timeout, String what)
      throws IOException, InterruptedException {
    return FlinkRestFailures.await(future, timeout, base, what);
  }
}
