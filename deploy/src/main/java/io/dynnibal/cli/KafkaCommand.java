package io.dynnibal.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.dynnibal.deploy.KafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code dynnibal kafka start|stop|status}: a single-node KRaft broker in its own JVM, by data
 * directory.
 */
@Command(
    name = "kafka",
    description =
        "Run a single-node Kafka KRaft broker as its own process (PID file, log and data under --dir).",
    subcommands = {KafkaCommand.Start.class, KafkaCommand.Stop.class, KafkaCommand.Status.class})
final class KafkaCommand {
  static class DirOption {
    @Option(
        names = "--dir",
        defaultValue = "dynnibal-kafka",
        description =
            "Data directory: broker.pid, broker.port, broker.log, data/ (default ${DEFAULT-VALUE}).")
    Path dir;
  }

  @Command(name = "start", description = "Start the broker and wait until it serves.")
  static final class Start extends DirOption implements Callable<Integer> {
    @Option(
        names = "--port",
        defaultValue = "9092",
        description = "Client port on 127.0.0.1 (default ${DEFAULT-VALUE}).")
    int port;

    @Option(
        names = "--controller-port",
        defaultValue = "9093",
        description = "KRaft controller port (default ${DEFAULT-VALUE}).")
    int controllerPort;

    @Option(
        names = "--timeout",
        defaultValue = "90",
        description = "Seconds to wait for it to serve (default ${DEFAULT-VALUE}).")
    int timeoutSeconds;

    @Override
    public Integer call() throws Exception {
      KafkaBroker.Status s =
          KafkaBroker.start(dir, port, controllerPort, Duration.ofSeconds(timeoutSeconds));
      System.out.printf(
          "kafka broker running: pid %d, bootstrap %s, log %s%n",
          s.pid(), s.bootstrap(), dir.resolve("broker.log"));
      return 0;
    }
  }

  @Command(name = "stop", description = "Stop the broker (SIGTERM; SIGKILL after 60 s).")
  static final class Stop extends DirOption implements Callable<Integer> {
    @Override
    public Integer call() throws Exception {
      System.out.println(
          KafkaBroker.stop(dir, Duration.ofSeconds(60))
              ? "kafka broker stopped"
              : "no kafka broker was running on " + dir);
      return 0;
    }
  }

  @Command(
      name = "status",
      description =
          "Print whether the broker runs and serves, as JSON; exit 0 when it serves, 3 otherwise.")
  static final class Status extends DirOption implements Callable<Integer> {
    @Override
    public Integer call() throws Exception {
      KafkaBroker.Status s = KafkaBroker.status(dir);
      Map<String, Object> figures = new LinkedHashMap<>();
      figures.put("running", s.running());
      figures.put("pid", s.pid());
      figures.put("bootstrap", s.bootstrap());
      figures.put("serving", s.serving());
      System.out.println(new ObjectMapper().writeValueAsString(figures));
      return s.serving() ? 0 : 3;
    }
  }
}
