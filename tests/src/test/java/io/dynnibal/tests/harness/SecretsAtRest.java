package io.dynnibal.tests.harness;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dynnibal.jobs.config.SecretReferences;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.JobConfiguration;
import io.dynnibal.jobs.training.TrainingJob;
import java.io.IOException;
import java.io.InputStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.InstantiationUtil;

/**
 * Where a secret must not be: a test's helpers to give Kafka secrets by reference (a properties
 * file, owner-only, that Kafka's {@code FileConfigProvider} reads), and to look for the secret
 * bytes in a job jar (every entry, decompressed), in the Java-serialised job graph, and in the
 * command line of every process ({@code /proc/<pid>/cmdline}) while the test runs.
 */
public final class SecretsAtRest {
  public static final String FILE_PROVIDER =
      "org.apache.kafka.common.config.provider.FileConfigProvider";

  private SecretsAtRest() {}

  /**
   * {@code client} with each secret property ({@link SecretReferences#isSecret}) moved into {@code
   * file} (created owner-only) and replaced by a {@code ${file:...}} reference, plus the provider's
   * declaration. Properties that are not secret stay as they are.
   */
  public static Map<String, String> byReference(Path file, Map<String, String> client)
      throws IOException {
    Properties secrets = new Properties();
    Map<String, String> out = new LinkedHashMap<>();
    out.put("config.providers", "file");
    out.put("config.providers.file.class", FILE_PROVIDER);
    String path = file.toAbsolutePath().toString();
    client.forEach(
        (k, v) -> {
          if (SecretReferences.isSecret(k)) {
            secrets.setProperty(k, v);
            out.put(k, "${file:" + path + ":" + k + "}");
          } else {
            out.put(k, v);
          }
        });
    Files.deleteIfExists(file);
    Files.createFile(
        file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    try (Writer w = Files.newBufferedWriter(file, StandardCharsets.ISO_8859_1)) {
      secrets.store(w, null);
    }
    return out;
  }

  /** Every entry of {@code jar}, decompressed, as ISO-8859-1 text, by name. */
  public static Map<String, String> jarEntries(Path jar) throws IOException {
    Map<String, String> entries = new LinkedHashMap<>();
    try (JarFile file = new JarFile(jar.toFile())) {
      for (JarEntry entry : Collections.list(file.entries())) {
        try (InputStream in = file.getInputStream(entry)) {
          entries.put(entry.getName(), new String(in.readAllBytes(), StandardCharsets.ISO_8859_1));
        }
      }
    }
    return entries;
  }

  /**
   * The job graph of {@code config} as the cluster receives it: built as {@code TrainingJobMain}
   * builds it, Java-serialised, as ISO-8859-1 text. Reads the targets topic's end offsets.
   */
  public static String serialisedJobGraph(TrainingJobConfig config) throws IOException {
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(JobConfiguration.of(config));
    env.setParallelism(config.job.parallelism);
    TrainingJob.build(env, config);
    byte[] graph = InstantiationUtil.serializeObject(env.getStreamGraph().getJobGraph());
    return new String(graph, StandardCharsets.ISO_8859_1);
  }

  /** Fails if any of {@code secrets} appears in {@code content}; names {@code where}, not it. */
  public static void assertAbsent(List<String> secrets, String where, String content) {
    for (String secret : secrets) {
      assertFalse(content.contains(secret), "a secret appears in " + where);
    }
  }

  /**
   * Reads every process's command line every 50 ms until closed: what {@code ps} shows any local
   * user. {@link #seen} holds each distinct one (NUL-separated arguments joined by spaces).
   */
  public static final class CommandLines implements AutoCloseable {
    private final Set<String> seen = ConcurrentHashMap.newKeySet();
    private final Thread reader;
    private volatile boolean open = true;

    public CommandLines() {
      reader =
          new Thread(
              () -> {
                while (open) {
                  readAll();
                  try {
                    Thread.sleep(50);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "command-lines");
      reader.setDaemon(true);
      reader.start();
    }

    private void readAll() {
      try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
        for (Path p : procs.toList()) {
          if (p.getFileName().toString().chars().allMatch(Character::isDigit)) {
            try {
              byte[] raw = Files.readAllBytes(p.resolve("cmdline"));
              if (raw.length > 0) {
                seen.add(new String(raw, StandardCharsets.ISO_8859_1).replace('\0', ' ').trim());
              }
            } catch (IOException | SecurityException gone) {
              // the process ended, or is not ours to read
            }
          }
        }
      } catch (IOException e) {
        throw new IllegalStateException("cannot list /proc", e);
      }
    }

    /** The distinct command lines seen so far (a last read first). */
    public Set<String> seen() {
      readAll();
      return Set.copyOf(seen);
    }

    /** Fails unless some command line seen contains every one of {@code words}. */
    public void assertSaw(String... words) {
      assertTrue(
          seen().stream().anyMatch(c -> Stream.of(words).allMatch(c::contains)),
          "no process seen with " + List.of(words));
    }

    @Override
    public void close() throws InterruptedException {
      open = false;
      reader.interrupt();
      reader.join();
    }
  }
}
