package io.dynnibal.cli;

import io.dynnibal.deploy.FlinkClusterClient;
import java.net.URI;
import picocli.CommandLine.Option;

/** {@code --jobmanager}: the Flink cluster a command talks to, by its REST address. */
final class JobManagerOption {
  static final String DEFAULT = "http://127.0.0.1:8081";

  @Option(
      names = "--jobmanager",
      defaultValue = DEFAULT,
      description =
          "The JobManager's REST address (default ${DEFAULT-VALUE}, what `cluster start` serves).")
  URI jobManager;

  /** A client of that JobManager; the caller closes it. */
  FlinkClusterClient client() {
    return new FlinkClusterClient(jobManager);
  }

  /** The option as a follow-up command needs it: nothing for the default. */
  String flag() {
    return jobManager.toString().equals(DEFAULT) ? "" : " --jobmanager " + jobManager;
  }
}
