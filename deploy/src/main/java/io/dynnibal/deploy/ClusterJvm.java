package io.dynnibal.deploy;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleFinder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;

/**
 * The command line of a cluster process: this JVM's {@code java}, the memory flags Flink computes
 * for the process, the module openings Flink needs on Java 17, the process's log file and the
 * cluster's {@code conf/}.
 */
final class ClusterJvm {
  /**
   * flink-dist's {@code env.java.opts.all} for Java 17: Flink reflects into these JDK packages
   * (Kryo, the memory manager, the RPC system). One list for the CLI jar's manifest and these JVMs:
   * the root pom's properties. Plus the Vector API's module, which the index's inner products run
   * on ({@code VectorMath}), when this JVM's image has it.
   */
  static final List<String> JAVA_17_OPENINGS = javaModuleOpenings();

  /**
   * DJL in a TaskManager: libtorch from the native jar on the classpath (offline), one intra-op and
   * one inter-op thread per user (each slot is a thread; more make OpenMP spin on few cores).
   */
  static final List<String> DJL_PROPERTIES =
      List.of(
          "-Dai.djl.offline=true",
          "-Dai.djl.pytorch.num_threads=1",
          "-Dai.djl.pytorch.num_interop_threads=1");

  private ClusterJvm() {}

  /**
   * The command that runs {@code mainClass} as the cluster process {@code name}, logging to {@code
   * log/<name>.log} under {@code dir}.
   *
   * @param memoryFlags the JVM flags Flink's process spec gives, space-separated
   * @param dynamicConfigs the {@code -D key=value} settings Flink's process spec gives
   */
  static List<String> command(
      Path dir,
      String name,
      String memoryFlags,
      List<String> properties,
      String classpath,
      String mainClass,
      String dynamicConfigs) {
    List<String> command = new ArrayList<>(List.of(DaemonProcess.java()));
    command.addAll(Arrays.asList(memoryFlags.trim().split("\\s+")));
    command.addAll(JAVA_17_OPENINGS);
    command.addAll(properties);
    command.add("-Dlog.file=" + dir.resolve("log").resolve(name + ".log"));
    command.add(
        "-Dlog4j.configurationFile=" + dir.resolve("conf").resolve("log4j.properties").toUri());
    command.addAll(
        List.of("-cp", classpath, mainClass, "--configDir", dir.resolve("conf").toString()));
    command.addAll(Arrays.asList(dynamicConfigs.trim().split("\\s+")));
    return command;
  }

  private static List<String> javaModuleOpenings() {
    Properties p = new Properties();
    try (InputStream in = ClusterJvm.class.getResourceAsStream("java-module-openings.properties")) {
      p.load(in);
    } catch (IOException | NullPointerException e) {
      throw new IllegalStateException(
          "java-module-openings.properties is missing from the build", e);
    }
    List<String> flags = new ArrayList<>();
    // The daemons run this JVM's java, which refuses to start if asked for a module its image
    // lacks.
    if (ModuleFinder.ofSystem().find("jdk.incubator.vector").isPresent()) {
      flags.add("--add-modules=jdk.incubator.vector");
    }
    for (String module : p.getProperty("exports").trim().split("\\s+")) {
      flags.add("--add-exports=" + module + "=ALL-UNNAMED");
    }
    for (String module : p.getProperty("opens").trim().split("\\s+")) {
      flags.add("--add-opens=" + module + "=ALL-UNNAMED");
    }
    return List.copyOf(flags);
  }
}
