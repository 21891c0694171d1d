package io.dynnibal.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;

/**
 * The parts of Flink's REST API that deploying the job needs: cluster overview, jar upload and run,
 * job list, cancel, stop with a savepoint. Errors come back as {@link IllegalStateException}s
 * carrying what Flink said (for a failed run, the job's main() exception) without the stack frames.
 */
public final class FlinkRestClient {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Queries and polls: a JobManager that takes longer is as good as absent. */
  private static final Duration QUICK = Duration.ofSeconds(10);

  /**
   * Uploads and runs: running a jar executes the job's main() on the JobManager (Kafka lookups
   * included).
   */
  private static final Duration SLOW = Duration.ofMinutes(2);

  /** {@code GET /overview}. */
  public record Overview(
      int taskManagers, int slotsTotal, int slotsAvailable, int jobsRunning, String flinkVersion) {}

  /** One row of {@code GET /jobs/overview}. */
  public record Job(String id, String name, String state, long startTime, long durationMs) {}

  private final URI base;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  public FlinkRestClient(URI base) {
    this.base = base.toString().endsWith("/") ? base : URI.create(base + "/");
  }

  public URI base() {
    return base;
  }

  /** The cluster's overview, or empty when nothing answers at the address. */
  public Optional<Overview> overview() {
    try {
      JsonNode o = get("overview");
      return Optional.of(
          new Overview(
              o.path("taskmanagers").asInt(),
              o.path("slots-total").asInt(),
              o.path("slots-available").asInt(),
              o.path("jobs-running").asInt(),
              o.path("flink-version").asText()));
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
    for (JsonNode entry : get("jobmanager/config")) {
      config.put(entry.path("key").asText(), entry.path("value").asText());
    }
    return config;
  }

  /** Uploads a job jar; returns the id the cluster stores it under. */
  public String uploadJar(Path jar) throws IOException, InterruptedException {
    String boundary = "dynnibal-" + UUID.randomUUID();
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.write(
        ("--"
                + boundary
                + "\r\nContent-Disposition: form-data; name=\"jarfile\"; filename=\""
                + jar.getFileName()
                + "\"\r\nContent-Type: application/x-java-archive\r\n\r\n")
            .getBytes(StandardCharsets.UTF_8));
    body.write(Files.readAllBytes(jar));
    body.write(("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8));
    JsonNode answer =
        send(
            HttpRequest.newBuilder(base.resolve("jars/upload"))
                .timeout(SLOW)
                .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray())));
    String stored = answer.path("filename").asText();
    if (stored.isEmpty()) {
      throw new IllegalStateException("the cluster stored no jar: " + answer);
    }
    return Path.of(stored).getFileName().toString();
  }

  /**
   * Runs an uploaded jar's {@code entryClass} with {@code args} on the JobManager, which builds and
   * submits the job.
   *
   * @param savepoint the savepoint to restore from, or null for a fresh start
   * @return the job id
   */
  public String runJar(
      String jarId,
      String entryClass,
      List<String> args,
      String savepoint,
      boolean allowNonRestoredState)
      throws IOException, InterruptedException {
    ObjectNode request = JSON.createObjectNode().put("entryClass", entryClass);
    args.forEach(request.putArray("programArgsList")::add);
    if (savepoint != null) {
      request.put("savepointPath", savepoint).put("allowNonRestoredState", allowNonRestoredState);
    }
    return send(post("jars/" + jarId + "/run", request)).path("jobid").asText();
  }

  public void deleteJar(String jarId) throws IOException, InterruptedException {
    send(HttpRequest.newBuilder(base.resolve("jars/" + jarId)).timeout(QUICK).DELETE());
  }

  /** Every job the cluster knows, newest first. */
  public List<Job> jobs() throws IOException, InterruptedException {
    List<Job> jobs = new ArrayList<>();
    for (JsonNode j : get("jobs/overview").path("jobs")) {
      jobs.add(
          new Job(
              j.path("jid").asText(),
              j.path("name").asText(),
              j.path("state").asText(),
              j.path("start-time").asLong(),
              j.path("duration").asLong()));
    }
    jobs.sort((a, b) -> Long.compare(b.startTime(), a.startTime()));
    return jobs;
  }

  /** The job's state: RUNNING, FINISHED, CANCELED, FAILED, ... */
  public String jobState(String jobId) throws IOException, InterruptedException {
    return get("jobs/" + jobId).path("state").asText();
  }

  /** The job's latest failure (messages only), if it has failed or restarted since it started. */
  public Optional<String> latestFailure(String jobId) throws IOException, InterruptedException {
    JsonNode entries =
        get("jobs/" + jobId + "/exceptions").path("exceptionHistory").path("entries");
    return entries.isEmpty()
        ? Optional.empty()
        : Optional.of(withoutStackFrames(entries.get(0).path("stacktrace").asText()));
  }

  /** Cancels the job without a savepoint (its retained checkpoints stay). */
  public void cancel(String jobId) throws IOException, InterruptedException {
    send(
        HttpRequest.newBuilder(base.resolve("jobs/" + jobId + "?mode=cancel"))
            .timeout(QUICK)
            .method("PATCH", HttpRequest.BodyPublishers.noBody()));
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
    ObjectNode request = JSON.createObjectNode().put("drain", false);
    if (targetDirectory != null) {
      request.put("targetDirectory", targetDirectory);
    }
    String trigger = send(post("jobs/" + jobId + "/stop", request)).path("request-id").asText();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      JsonNode status = get("jobs/" + jobId + "/savepoints/" + trigger);
      if ("COMPLETED".equals(status.path("status").path("id").asText())) {
        JsonNode operation = status.path("operation");
        if (operation.has("failure-cause")) {
          throw new IllegalStateException(
              "the savepoint of job "
                  + jobId
                  + " failed: "
                  + withoutStackFrames(
                      operation
                          .path("failure-cause")
                          .path("stack-trace")
                          .asText(operation.path("failure-cause").toString())));
        }
        awaitTerminal(
            jobId, deadline); // its slots are free for the resumed job once it has finished
        return operation.path("location").asText();
      }
      Thread.sleep(500);
    }
    throw new IllegalStateException(
        "the savepoint of job " + jobId + " did not complete within " + timeout.toSeconds() + " s");
  }

  private void awaitTerminal(String jobId, long deadline) throws IOException, InterruptedException {
    while (!List.of("FINISHED", "CANCELED", "FAILED").contains(jobState(jobId))
        && System.nanoTime() < deadline) {
      Thread.sleep(200);
    }
  }

  private JsonNode get(String path) throws IOException, InterruptedException {
    return send(HttpRequest.newBuilder(base.resolve(path)).timeout(QUICK).GET());
  }

  private HttpRequest.Builder post(String path, JsonNode body) throws IOException {
    return HttpRequest.newBuilder(base.resolve(path))
        .timeout(SLOW)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
  }

  private JsonNode send(HttpRequest.Builder request) throws IOException, InterruptedException {
    HttpResponse<String> response;
    try {
      response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (ConnectException | java.net.http.HttpConnectTimeoutException e) {
      throw new IOException("no Flink REST API at " + base + " (is the cluster running?)", e);
    }
    if (response.statusCode() >= 300) {
      List<String> errors = new ArrayList<>();
      try {
        JSON.readTree(response.body())
            .path("errors")
            .forEach(e -> errors.add(withoutStackFrames(e.asText())));
      } catch (IOException notJson) {
        errors.add(response.body()); // a proxy's or servlet's error page
      }
      throw new IllegalStateException(
          "Flink answered "
              + response.statusCode()
              + " to "
              + response.request().method()
              + " "
              + response.request().uri().getPath()
              + ": "
              + String.join("; ", errors));
    }
    return response.body().isBlank() ? JSON.createObjectNode() : JSON.readTree(response.body());
  }

  /** A Java stack trace as its messages only: the lines that are not frames. */
  static String withoutStackFrames(String trace) {
    StringBuilder out = new StringBuilder();
    for (String line : trace.split("\n")) {
      String t = line.strip();
      if (t.isEmpty() || t.startsWith("at ") || t.startsWith("... ")) {
        continue;
      }
      out.append(out.length() == 0 ? "" : "\n  ").append(t);
    }
    return out.toString();
  }
}
