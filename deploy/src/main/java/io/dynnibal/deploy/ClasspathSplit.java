package io.dynnibal.deploy;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.Attributes;
import java.util.jar.JarFile;

/**
 * This JVM's classpath split in two: what a Flink session cluster runs with (Flink, RocksDB, Kafka
 * clients, DJL and libtorch, logging: every third-party jar) and what a submitted job brings
 * (dynnibal's own classes, the entries that hold {@code io/dynnibal/}).
 *
 * <p>Why the split: libtorch's native library loads once per JVM, so DJL must come from the
 * cluster's class loader, never from a job's; a job jar that bundled it would fail on its second
 * submission to the same TaskManagers (a resume from a savepoint is one). Our own classes go with
 * the job, so a new build is submitted, not installed.
 *
 * <p>Under {@code java -jar dynnibal-cli.jar} the classpath is that one jar; its manifest's {@code
 * Class-Path} (lib/*.jar) is expanded here. Under a test runner it is the module and repository
 * paths, expanded the same way.
 */
record ClasspathSplit(List<Path> cluster, List<Path> job) {
  private static final String OUR_PACKAGE = "io/dynnibal/";

  /** The split of this JVM's classpath. */
  static ClasspathSplit ofThisJvm() {
    List<Path> cluster = new ArrayList<>();
    List<Path> job = new ArrayList<>();
    for (Path entry : expand(System.getProperty("java.class.path"))) {
      (holdsOurClasses(entry) ? job : cluster).add(entry);
    }
    if (job.isEmpty()) {
      throw new IllegalStateException("no entry of this JVM's classpath holds dynnibal's classes");
    }
    return new ClasspathSplit(List.copyOf(cluster), List.copyOf(job));
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
    if (Files.isDirectory(entry)) {
      return Files.isDirectory(entry.resolve(OUR_PACKAGE));
    }
    try (JarFile jar = new JarFile(entry.toFile())) {
      return jar.stream().anyMatch(e -> e.getName().startsWith(OUR_PACKAGE));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the classpath entry " + entry, e);
    }
  }
}
