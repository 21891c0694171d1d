package io.dynnibal.tests.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The structure every product module keeps: small source files, packages without cycles, and an
 * index that is plain Java.
 *
 * <p>The classes come from the product modules on this module's classpath (it depends on deploy,
 * and through it on every module upstream), tests left out. The sources are read from the
 * repository: the working directory is this module's, so {@code ..} is the repository root and
 * {@code ../<module>/src/main/java} each module's main sources.
 */
class StructureTest {
  /** The most lines a main source file may have: a file that needs more does more than one job. */
  static final int MAX_LINES = 400;

  private static final Path ROOT = Path.of("..");
  private static JavaClasses classes;

  @BeforeAll
  static void importClasses() {
    classes =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.dynnibal");
  }

  @Test
  void noMainSourceFileIsOverTheLineLimit() throws IOException {
    List<Path> sources = mainSources();
    assertTrue(
        sources.size() > 100, "found only " + sources.size() + " main sources under " + ROOT);
    List<String> offenders = new ArrayList<>();
    for (Path source : sources) {
      long lines = lineCount(source);
      if (lines > MAX_LINES) {
        offenders.add(ROOT.relativize(source) + ": " + lines + " lines");
      }
    }
    if (!offenders.isEmpty()) {
      fail(
          offenders.size()
              + " main source file(s) over "
              + MAX_LINES
              + " lines (split them by responsibility):\n  "
              + String.join("\n  ", offenders));
    }
  }

  @Test
  void packagesAreFreeOfCycles() {
    slices().matching("io.dynnibal.(**)").should().beFreeOfCycles().check(classes);
  }

  /** The index is plain Java: neither Flink nor DJL, nor the Flink-backed state beside it. */
  @Test
  void theIndexDependsOnNeitherFlinkNorDjlNorTheState() {
    noClasses()
        .that()
        .resideInAPackage("io.dynnibal.index..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("org.apache.flink..", "ai.djl..", "io.dynnibal.state..")
        .check(classes);
  }

  /**
   * The same for the index's source text, which also sees imports only javadoc uses (gone from the
   * class files).
   */
  @Test
  void noSourceOfTheIndexImportsFlinkOrDjlOrTheState() throws IOException {
    Path index =
        ROOT.resolve(Path.of("state-backend", "src", "main", "java", "io", "dynnibal", "index"));
    assertTrue(Files.isDirectory(index), index + " is missing");
    List<String> offenders = new ArrayList<>();
    try (Stream<Path> files = Files.walk(index)) {
      for (Path p : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        String text = Files.readString(p);
        if (text.contains("import org.apache.flink")
            || text.contains("import ai.djl")
            || text.contains("import io.dynnibal.state")) {
          offenders.add(ROOT.relativize(p).toString());
        }
      }
    }
    assertEquals(List.of(), offenders);
  }

  /** The state beside the index is Flink's, but the state backend never needs DJL. */
  @Test
  void theStateDependsNotOnDjl() {
    noClasses()
        .that()
        .resideInAPackage("io.dynnibal.state..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("ai.djl..")
        .check(classes);
  }

  /** Every {@code *.java} under {@code <module>/src/main/java} of the repository's modules. */
  private static List<Path> mainSources() throws IOException {
    List<Path> sources = new ArrayList<>();
    try (Stream<Path> modules = Files.list(ROOT)) {
      for (Path module : modules.sorted().toList()) {
        Path main = module.resolve(Path.of("src", "main", "java"));
        if (!Files.isDirectory(main)) {
          continue;
        }
        try (Stream<Path> files = Files.walk(main)) {
          files.filter(p -> p.toString().endsWith(".java")).sorted().forEach(sources::add);
        }
      }
    }
    return sources;
  }

  private static long lineCount(Path source) {
    try (Stream<String> lines = Files.lines(source)) {
      return lines.count();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
