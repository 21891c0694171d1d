package io.dynnibal.jobs.training;

import io.dynnibal.jobs.config.SecretReferences;
import io.dynnibal.jobs.config.TrainingJobConfig;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The training job's entry point on a Flink cluster: what {@code dynnibal submit} runs from the job
 * jar to build the graph it submits (as {@code flink run} does) and what a Kubernetes {@code
 * FlinkDeployment} names.
 *
 * <p>Settings, each layer over the one before: the defaults; the resource {@value
 * #SETTINGS_RESOURCE} when the jar carries one ({@code dynnibal submit} bundles the user's file
 * there); {@code --config FILE} (a path where main() runs, e.g. a mounted ConfigMap); {@code --set
 * key=value}, repeatable. Bad settings fail the submission with every problem named; a Kafka secret
 * given literally with {@code --set} (a process argument) or anywhere else (the graph would carry
 * it) is refused: secrets come by reference ({@code SecretReferences}).
 */
public final class TrainingJobMain {
  /** Where a job jar carries its settings. */
  public static final String SETTINGS_RESOURCE = "dynnibal/job.properties";

  private TrainingJobMain() {}

  public static void main(String[] args) throws Exception {
    TrainingJobConfig config;
    try (InputStream bundled =
        TrainingJobMain.class.getClassLoader().getResourceAsStream(SETTINGS_RESOURCE)) {
      config = settings(bundled, args).validate();
    }
    StateDirectories.prepare(config);
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(JobConfiguration.of(config));
    env.setParallelism(config.job.parallelism);
    TrainingJob.build(env, config);
    env.execute(jobName(config));
  }

  /**
   * The name the cluster lists the job under: its consumer group (one job per group) and sampler.
   */
  public static String jobName(TrainingJobConfig config) {
    return "dynnibal training " + config.kafka.groupId + " (" + config.sampler.name + ")";
  }

  /** The settings from the bundled resource ({@code bundled}, may be null) and the arguments. */
  static TrainingJobConfig settings(InputStream bundled, String[] args) throws IOException {
    TrainingJobConfig config = new TrainingJobConfig();
    if (bundled != null) {
      Properties properties = new Properties();
      properties.load(bundled);
      config.applyAll(properties);
    }
    Path file = null;
    List<String> overrides = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      String flag = args[i];
      if (i + 1 >= args.length || !(flag.equals("--config") || flag.equals("--set"))) {
        throw new IllegalArgumentException(
            "usage: TrainingJobMain [--config FILE] [--set key=value]...; got " + List.of(args));
      }
      String value = args[++i];
      if (flag.equals("--config")) {
        file = Path.of(value);
      } else {
        int eq = value.indexOf('=');
        if (eq > 0) {
          SecretReferences.requireNotOnCommandLine(
              "--set", value.substring(0, eq), value.substring(eq + 1), true, "the --config file");
        }
        overrides.add(value);
      }
    }
    if (file != null) {
      config.applyFile(file);
    }
    return config.applyOverrides(overrides);
  }
}
