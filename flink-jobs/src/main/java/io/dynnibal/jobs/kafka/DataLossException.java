package io.dynnibal.jobs.kafka;

import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * Records the job was to read are gone, or would be read wrongly, from a topic: an offset no longer
 * in its log, a topic deleted and recreated under the same name, a checkpoint older than a
 * compacted topic keeps its deletes. Flink does not restart a job on it (a restart would restore
 * the same offsets and fail again): the job fails at once, and the message says what happened and
 * what the operator can do.
 */
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public final class DataLossException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** The setting that lets the job go on past such a loss, as the message names it. */
  public static final String ACCEPT = "accept.data.loss=true";

  public DataLossException(String message) {
    super(message);
  }

  public DataLossException(String message, Throwable cause) {
    super(message, cause);
  }
}
