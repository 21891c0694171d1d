package io.dynnibal.cli;

import io.dynnibal.cli.options.JsonFormat;
import io.dynnibal.cli.options.OneLineJson;
import io.dynnibal.index.VectorMath;
import io.dynnibal.model.TorchRuntime;
import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import org.apache.avro.Schema;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.kafka.clients.producer.KafkaProducer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** Prints the versions of the stack this build runs on, and whether training will use a GPU. */
@Command(
    name = "version",
    description =
        "Print the Flink, Kafka, Avro, DJL and libtorch versions, the training device and the"
            + " index's inner-product kernels.")
final class VersionCommand implements Callable<Integer> {
  @Mixin JsonFormat format;

  @Override
  public Integer call() {
    Map<String, String> versions = versions();
    if (format.json()) {
      System.out.println(OneLineJson.of(new LinkedHashMap<>(versions)));
    } else {
      versions.forEach((k, v) -> System.out.printf("%-10s %s%n", k, v));
    }
    return 0;
  }

  static Map<String, String> versions() {
    Map<String, String> versions = new LinkedHashMap<>();
    versions.put("dynnibal", dynnibalVersion());
    versions.put(
        "java",
        System.getProperty("java.version") + " (" + System.getProperty("java.vendor") + ")");
    versions.put("flink", EnvironmentInformation.getVersion());
    versions.put("kafka", kafkaClientsVersion());
    versions.put("avro", String.valueOf(Schema.class.getPackage().getImplementationVersion()));
    TorchRuntime.Description torch = TorchRuntime.describe();
    versions.put("djl", torch.djlVersion());
    versions.put("libtorch", torch.libtorchVersion());
    versions.put("gpu", torch.gpuCount() == 0 ? "none visible" : torch.gpuCount() + " visible");
    versions.put("device", torch.trainingDevice().toString());
    versions.put(
        "kernels",
        VectorMath.VECTORIZED
            ? "Vector API (jdk.incubator.vector)"
            : "scalar (the JVM lacks --add-modules jdk.incubator.vector)");
    return versions;
  }

  /**
   * kafka-clients' own record of its version (its AppInfoParser moved between releases; the file
   * did not).
   */
  private static String kafkaClientsVersion() {
    try (InputStream in =
        KafkaProducer.class.getResourceAsStream("/kafka/kafka-version.properties")) {
      Properties props = new Properties();
      if (in != null) {
        props.load(in);
      }
      return props.getProperty("version", "unknown");
    } catch (IOException e) {
      return "unknown (" + e.getMessage() + ")";
    }
  }

  private static String dynnibalVersion() {
    String version = VersionCommand.class.getPackage().getImplementationVersion();
    return version == null ? "dev (classes, not the packaged jar)" : version;
  }

  /** {@code dynnibal --version}: the project's own version only, without loading libtorch. */
  static final class Provider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"dynnibal " + dynnibalVersion()};
    }
  }
}
