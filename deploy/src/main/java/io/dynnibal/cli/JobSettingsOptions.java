package io.dynnibal.cli;

import io.dynnibal.jobs.config.SecretReferences;
import io.dynnibal.jobs.config.TrainingJobConfig;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import picocli.CommandLine.Option;

/** The job's settings on the command line: a properties file and {@code key=value} overrides. */
public class JobSettingsOptions {
  @Option(
      names = "--config",
      description = "Job configuration (properties file); ./dynnibal settings lists the keys.")
  Path configFile;

  @Option(
      names = "--set",
      description =
          "Override one job setting, key=value (repeatable), e.g. --set reencode.every=50;"
              + " ./dynnibal settings lists them.")
  List<String> overrides = new ArrayList<>();

  /**
   * The command's defaults, then {@code --config}, then {@code --set}: what the user says wins. A
   * Kafka secret given literally with {@code --set} is refused (every local user can read a
   * process's arguments): it belongs in the {@code --config} file or behind a reference.
   */
  public TrainingJobConfig config(List<String> defaults) throws IOException {
    for (String override : overrides) {
      int eq = override.indexOf('=');
      if (eq > 0) {
        SecretReferences.requireNotOnCommandLine(
            "--set",
            override.substring(0, eq),
            override.substring(eq + 1),
            true,
            "the --config file (readable by you only)");
      }
    }
    TrainingJobConfig config = TrainingJobConfig.load(null, defaults);
    if (configFile != null) {
      config.applyFile(configFile);
    }
    return config.applyOverrides(overrides);
  }

  /**
   * Whether the user set {@code key}, in the file or with {@code --set} (a default does not count).
   */
  boolean userSets(String key) throws IOException {
    if (overrides.stream().anyMatch(o -> o.trim().startsWith(key + "="))) {
      return true;
    }
    if (configFile == null) {
      return false;
    }
    Properties file = new Properties();
    try (Reader reader = Files.newBufferedReader(configFile)) {
      file.load(reader);
    }
    return file.stringPropertyNames().stream().anyMatch(k -> k.trim().equals(key));
  }
}
