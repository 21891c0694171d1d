package io.dynnibal.schemas;

import java.io.IOException;

/**
 * A Kafka value (or state blob) that is not a readable record of the expected type. The message
 * says why in terms a user can act on: wrong topic, foreign producer, truncated bytes. Callers
 * route it to the dead-letter topic.
 */
public final class RecordDecodingException extends IOException {
  private static final long serialVersionUID = 1L;

  public RecordDecodingException(String message) {
    super(message);
  }

  public RecordDecodingException(String message, Throwable cause) {
    super(message, cause);
  }
}
