package io.dynnibal.cli.options;

import picocli.CommandLine.Option;

/** {@code --json}: answers as JSON objects, one a line, instead of a table for people. */
public final class JsonFormat {
  @Option(names = "--json", description = "Print one JSON object per answer instead of a table.")
  boolean json;

  /** Whether the user asked for JSON. */
  public boolean json() {
    return json;
  }
}
