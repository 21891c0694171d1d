package io.dynnibal.jobs.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The README's settings table is the declarations' table, and each declaration is complete. */
class SettingsDocumentationTest {
  private static final String BEGIN = "<!-- settings table: ./dynnibal settings -->\n";
  private static final String END = "<!-- end of settings table -->";

  @Test
  void readmeTableIsTheGeneratedOne() throws Exception {
    String readme = Files.readString(Path.of("..", "README.md"));
    int begin = readme.indexOf(BEGIN);
    int end = readme.indexOf(END);
    assertTrue(begin >= 0 && end > begin, "README.md has no settings table between the markers");
    assertEquals(
        SettingsDoc.settingsMarkdown(),
        readme.substring(begin + BEGIN.length(), end),
        "README.md's settings table is stale: paste the output of ./dynnibal settings");
  }

  @Test
  void everyKeyIsItsFieldNameAndHasADescription() {
    for (SettingsTable.Entry e : SettingsTable.ENTRIES) {
      assertEquals(SettingsTable.keyOf(e.field().getName()), e.key());
      assertTrue(e.declaration().value().length() > 10, e.key() + " has no real description");
      assertNotNull(SettingsDoc.defaultValue(e.key()), e.key());
    }
  }

  @Test
  void defaultsPassTheirOwnChecks() {
    assertEquals(java.util.List.of(), new TrainingJobConfig().problems());
  }

  @Test
  void boundsComeFromTheDeclaration() {
    TrainingJobConfig c = new TrainingJobConfig().apply("batch.size", "0");
    assertEquals(java.util.List.of("batch.size must be at least 1, got 0"), c.problems());
    c = new TrainingJobConfig().apply("tree.base", "Infinity");
    assertEquals(
        java.util.List.of("tree.base must be a finite number, got Infinity"), c.problems());
    c = new TrainingJobConfig().apply("snm.pool.fraction", "0");
    assertEquals(java.util.List.of("snm.pool.fraction must be in (0, 1], got 0.0"), c.problems());
  }
}
