package io.dynnibal.cli.options;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * {@code --json FILE}: a copy of the command's figures as one JSON object. {@link #print} writes
 * the object to standard output and, when the option is given, to the file.
 */
public final class JsonOutput {
  @Option(names = "--json", description = "Also write the figures as JSON to this file.")
  Path json;

  /** The file to write, or null when the option is absent. */
  public Path file() {
    return json;
  }

  /** The figures as one line of JSON on standard output, and in the file when one is given. */
  public void print(Map<String, Object> figures) throws IOException {
    print(figures, json);
  }

  /** The figures as one line of JSON on standard output, and in {@code file} unless it is null. */
  public static void print(Map<String, Object> figures, Path file) throws IOException {
    String out = OneLineJson.of(figures);
    System.out.println(out);
    write(out, file);
  }

  /** The figures as JSON in the file only, when one is given; nothing on standard output. */
  public void writeFile(Map<String, Object> figures) throws IOException {
    write(OneLineJson.of(figures), json);
  }

  private static void write(String out, Path file) throws IOException {
    if (file != null) {
      Files.writeString(file, out + System.lineSeparator());
    }
  }
}
