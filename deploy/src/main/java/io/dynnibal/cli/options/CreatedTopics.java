package io.dynnibal.cli.options;

import picocli.CommandLine.Option;

/**
 * {@code --partitions} and {@code --replication}: the shape of the job's topics a command creates.
 */
public final class CreatedTopics {
  @Option(
      names = "--partitions",
      defaultValue = "2",
      description =
          "Partitions of the targets and pairs topics if they must be created (default"
              + " ${DEFAULT-VALUE}).")
  int partitions;

  @Option(
      names = "--replication",
      defaultValue = "1",
      description = "Replication of created topics (default ${DEFAULT-VALUE}).")
  short replication;

  public int partitions() {
    return partitions;
  }

  public short replication() {
    return replication;
  }
}
