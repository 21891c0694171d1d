package io.dynnibal.jobs.training;

import io.dynnibal.trainer.FaultInjection;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A fault drill from outside the job (setting {@code fault.drill.file}): when the file exists
 * before a step, the trainer deletes it and fails its task, as a crash in the task would; Flink
 * restores the job from its last checkpoint. Deleting first makes the drill fire once per file,
 * also across the restore.
 */
final class FileTriggeredFault implements FaultInjection {
  private static final long serialVersionUID = 1L;

  private final String file;
  private final FaultInjection next;

  private FileTriggeredFault(String file, FaultInjection next) {
    this.file = file;
    this.next = next;
  }

  static FaultInjection andThen(String file, FaultInjection next) {
    return new FileTriggeredFault(file, next);
  }

  @Override
  public void beforeStep(long step) {
    try {
      if (Files.deleteIfExists(Path.of(file))) {
        throw new IllegalStateException(
            "fault drill before step "
                + step
                + ": "
                + file
                + " was found (setting fault.drill.file)");
      }
    } catch (IOException e) {
      throw new UncheckedIOException("fault.drill.file " + file, e);
    }
    next.beforeStep(step);
  }

  @Override
  public void afterModelUpdate(long version) {
    next.afterModelUpdate(version);
  }
}
