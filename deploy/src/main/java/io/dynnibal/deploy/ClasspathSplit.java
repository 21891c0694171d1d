package io.dynnibal.deploy;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.Attributes;
import java.util.jar.JarFile;

/**
 * This JVM's classpath split in two: what a Flink session cluster runs with (the job's third-party
 * runtime jars: Flink, RocksDB, Kafka clients, DJL and libtorch; plus the web UI, the Prometheus
 * reporter and a logging binding) and what a submitted job brings (dynnibal's own classes, the
 * entries that hold {@code io/dynnibal/}, but not the CLI's nor the benchmarks'). Everything else
 * the CLI carries (picocli, JFreeChart, the Kafka broker and its Scala, test libraries) goes to
 * neither.
 *
 * <p>Why the split: libtorch's native library loads once per JVM, so DJL must come from the
 * cluster's class loader, never from a job's; a job jar that bundled it would fail on its second
 * submission to the same TaskManagers (a resume from a savepoint is one). Our own classes go with
 * the job, so a new build is submitted, not installed.
 *
 * <p>The job's third-party artifacts are listed in the resource {@value #JOB_RUNTIME}, which the
 * flink-jobs build writes. Under {@code java -jar dynnibal-cli.jar} the classpath is that one jar;
 * its manifest's {@code Class-Path} (lib/*.jar) is expanded here. Under a test runner it is the
 * module and repository paths, expanded the same way.
 */
record ClasspathSplit(List<Path> cluster, List<Path> job) {
  private static final String OUR_PACKAGE = "io/dynnibal/";

  /**
   * Classes only the CLI holds: the commands (deploy) and the measurement harness (the benchmarks
   * module, whose jar is {@code dynnibal-cli.jar}); an entry holding either never travels with a
   * job.
   */
  private static final List<String> CLI_PACKAGES =
      List.of("io/dynnibal/cli/", "io/dynnibal/bench/");

  static final String JOB_RUNTIME = "io/dynnibal/jobs/runtime-classpath.txt";

  /** What the cluster runs beyond the job's jars: the web UI, the Prometheus reporter, log4j. */
  private static final List<String> CLUSTER_EXTRAS =
      List.of("flink-runtime-web-", "flink-metrics-prometheus-", "log4j-");

  /** The split of this JVM's classpath. */
  static ClasspathSplit ofThisJvm() {
    Set<String> jobJars = jobRuntimeJars();
    List<Path> cluster = new ArrayList<>();
    List<Path> job = new ArrayList<>();
    for (Path entry : expand(System.getProperty("java.class.path"))) {
      if (holdsOurClasses(entry)) {
        if (CLI_PACKAGES.stream().noneMatch(cli -> holds(entry, cli))) {
          job.add(entry);
        }
      } else if (Files.isRegularFile(entry)
          && forCluster(entry.getFileName().toString(), jobJars)) {
        cluster.add(entry);
      }
    }
    if (job.isEmpty()) {
      throw new IllegalStateException("no entry of this JVM's classpath holds dynnibal's classes");
    }
    return new ClasspathSplit(List.copyOf(cluster), List.copyOf(job));
  }

  /**
   * Whether a jar goes on the cluster: one of the job's artifacts, in whatever version this
   * classpath resolved (file names are {@code <artifactId>-<version>[-<classifier>].jar}), or an
   * extra.
   */
  private static boolean forCluster(String jar, Set<String> jobArtifacts) {
    for (String artifact : jobArtifacts) {
      if (jar.length() > artifact.length() + 1
          && jar.startsWith(artifact + "-")
          && Character.isDigit(jar.charAt(artifact.length() + 1))) {
        return true;
      }
    }
    return CLUSTER_EXTRAS.stream().anyMatch(jar::startsWith);
  }

  /**
   * The artifact ids of the job's third-party runtime jars. The resource lists their paths in the
   * build's repository ({@code .../<artifactId>/<version>/<file>.jar}); versions are left out
   * because another module's classpath may resolve another version of the same artifact.
   */
  static Set<String> jobRuntimeJars() {
    try (InputStream in = ClasspathSplit.class.getClassLoader().getResourceAsStream(JOB_RUNTIME)) {
      if (in == null) {
        throw new IllegalStateException(
            JOB_RUNTIME + " is missing: build flink-jobs with Maven (it lists the job's jars)");
      }
      Set<String> names = new LinkedHashSet<>();
      String listed = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
      for (String path : listed.split(File.pathSeparator)) {
        if (!path.isBlank()) {
          names.add(Path.of(path.trim()).getParent().getParent().getFileName().toString());
        }
      }
      return names;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + JOB_RUNTIME, e);
    }
  }

  /** The cluster's entries as a {@code -cp} argument. */
  String clusterClasspath() {
    return String.join(File.pathSeparator, cluster.stream().map(Path::toString).toList());
  }

  /**
   * The entries of a classpath string plus, for each jar, those its manifest's {@code Class-Path}
   * names.
   */
  static Set<Path> expand(String classpath) {
    Set<Path> entries = new LinkedHashSet<>();
    for (String part : classpath.split(File.pathSeparator)) {
      if (!part.isBlank()) {
        addWithManifest(Path.of(part).toAbsolutePath().normalize(), entries);
      }
    }
    return entries;
  }

  private static void addWithManifest(Path entry, Set<Path> entries) {
    if (!Files.exists(entry) || !entries.add(entry) || Files.isDirectory(entry)) {
      return;
    }
    try (JarFile jar = new JarFile(entry.toFile())) {
      String classPath =
          jar.getManifest() == null
              ? null
              : jar.getManifest().getMainAttributes().getValue(Attributes.Name.CLASS_PATH);
      if (classPath != null) {
        for (String reference : classPath.trim().split("\\s+")) {
          // Relative paths (our lib/) or file: URLs (a test runner's manifest-only jar).
          Path named =
              reference.startsWith("file:")
                  ? Path.of(URI.create(reference))
                  : entry.getParent().resolve(reference);
          addWithManifest(named.normalize(), entries);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the classpath entry " + entry, e);
    }
  }

  static boolean holdsOurClasses(Path entry) {
    return holds(entry, OUR_PACKAGE);
  }

  /** Whether a directory or jar holds anything under {@code folder}. */
  private static boolean holds(Path entry, String folder) {
    if (Files.isDirectory(entry)) {
      return Files.isDirectory(entry.resolve(folder));
    }
    try (JarFile jar = new JarFile(entry.toFile())) {
      return jar.stream().anyMatch(e -> e.getName().startsWith(folder));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the classpath entry " + entry, e);
    }
  }
}
