package io.dynnibal.tests.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.dynnibal.tests.harness.WorkDirs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The GPU kit's CPU dry run ({@code deploy/gpu-kit/gpu-kit --dry-run}), the part of the kit CI
 * runs: it packs the kit from the module's shaded jar, unpacks it, starts its Java runtime and runs
 * its smoke on DJL's published CPU libtorch. The slice is smaller and the compression lighter than
 * the default kit's, to keep it short; the default kit's size is checked by the same script.
 */
class GpuKitDryRunTest {
  private static final Path KIT_MODULE = Path.of("..", "deploy", "gpu-kit").toAbsolutePath();

  @Test
  @Timeout(600)
  void theKitPacksUnpacksStartsAndTrainsOnTheCpu() throws Exception {
    Path out = WorkDirs.fresh("gpu-kit").toAbsolutePath();
    Path log = out.resolve("gpu-kit.log");
    Process p =
        new ProcessBuilder(
                KIT_MODULE.resolve("gpu-kit").toString(),
                "--dry-run",
                "--skip-build",
                "--out",
                out.resolve("kit").toString(),
                "--max-targets",
                "512",
                "--xz-level",
                "1")
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    assertTrue(p.waitFor(540, TimeUnit.SECONDS), "the dry run did not finish");
    String output = Files.readString(log);
    assertEquals(0, p.exitValue(), output);
    assertTrue(output.contains("gpu-kit: dry run passed"), output);

    Path archive = out.resolve("kit/dynnibal-gpu-kit.tar.xz");
    assertTrue(Files.size(archive) < 64L * 1024 * 1024, "the kit is " + Files.size(archive));
    JsonNode smoke =
        new ObjectMapper().readTree(out.resolve("kit/dry-run/published.json").toFile());
    JsonNode cpu = smoke.path("runs").path("cpu");
    assertEquals(5, cpu.path("losses").size(), smoke.toString()); // 1 warm-up + 4 timed steps
    for (JsonNode loss : cpu.path("losses")) {
      assertTrue(Double.isFinite(loss.asDouble()) && loss.asDouble() >= 0, smoke.toString());
    }
    assertTrue(cpu.path("steps_per_s").asDouble() > 0, smoke.toString());
    assertTrue(cpu.path("encode_texts_per_s").asDouble() > 0, smoke.toString());
  }

  /** The kit runs on another machine's libtorch: its jar carries neither libtorch nor a JNI. */
  @Test
  void theKitsJarHoldsNoNativeLibraryAndNoFlink() throws Exception {
    Path jar = KIT_MODULE.resolve("target/dynnibal-gpu-kit.jar");
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      boolean trainer = false;
      for (Enumeration<? extends ZipEntry> e = zip.entries(); e.hasMoreElements(); ) {
        String name = e.nextElement().getName();
        assertFalse(name.endsWith(".so") && !name.startsWith("com/sun/jna/"), name);
        assertFalse(name.startsWith("jnilib/") || name.startsWith("pytorch/"), name);
        assertFalse(name.startsWith("org/apache/flink/"), name);
        trainer |= name.equals("io/dynnibal/training/DualEncoderTrainer.class");
      }
      assertTrue(trainer, "the trainer is missing from " + jar);
    }
  }
}
