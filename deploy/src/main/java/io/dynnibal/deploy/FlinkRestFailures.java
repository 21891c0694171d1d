package io.dynnibal.deploy;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.runtime.rest.util.RestClientException;
import org.apache.flink.util.ExceptionUtils;

/**
 * How {@link FlinkClusterClient} reports what went wrong: a JobManager that does not answer (no
 * connection, no answer in time) as an {@link IOException}; an answer that is an error, or a
 * failure of the request itself, as an {@link IllegalStateException} carrying Flink's messages
 * without their stack frames.
 */
final class FlinkRestFailures {
  private FlinkRestFailures() {}

  /**
   * The future's value within {@code timeout}.
   *
   * @param base the REST API's address, for the messages
   * @param what the request, for the messages (e.g. {@code GET /overview})
   */
  static <T> T await(CompletableFuture<T> future, Duration timeout, URI base, String what)
      throws IOException, InterruptedException {
    try {
      return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      future.cancel(true);
      throw new IOException(
          "no answer from the Flink REST API at "
              + base
              + " to "
              + what
              + " within "
              + timeout.toSeconds()
              + " s");
    } catch (ExecutionException e) {
      throw failure(e, base, what);
    }
  }

  /**
   * The failure of a request, to throw.
   *
   * @throws IOException when nothing answered at {@code base}
   */
  static RuntimeException failure(ExecutionException e, URI base, String what) throws IOException {
    if (ExceptionUtils.findThrowable(e, ConnectException.class).isPresent()) {
      throw new IOException("no Flink REST API at " + base + " (is the cluster running?)", e);
    }
    Optional<RestClientException> rest = ExceptionUtils.findThrowable(e, RestClientException.class);
    if (rest.isPresent()) {
      return new IllegalStateException(
          "Flink answered "
              + rest.get().getHttpResponseStatus().code()
              + " to "
              + what
              + ": "
              + withoutStackFrames(errors(rest.get().getMessage())));
    }
    return new IllegalStateException(what + " failed: " + messages(e.getCause()));
  }

  /** Whether the failure came from the REST exchange (an error answer, or no connection). */
  static boolean ofTheExchange(ExecutionException e) {
    return ExceptionUtils.findThrowable(e, RestClientException.class).isPresent()
        || ExceptionUtils.findThrowable(e, ConnectException.class).isPresent();
  }

  /** The messages of {@code t} and its causes, one a line. */
  static String messages(Throwable t) {
    return withoutStackFrames(ExceptionUtils.stringifyException(t));
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

  /** {@link RestClientException}'s message is the list of Flink's errors: one per line. */
  private static String errors(String message) {
    return message != null && message.startsWith("[") && message.endsWith("]")
        ? message.substring(1, message.length() - 1)
        : String.valueOf(message);
  }
}
