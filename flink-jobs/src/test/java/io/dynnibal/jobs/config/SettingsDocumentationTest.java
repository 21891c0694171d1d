package io.dynnibal.jobs.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * docs/settings.md's settings table is the declarations' table, and each declaration is complete.
 */
class SettingsDocumentationTest {
  private static final String BEGIN = "<!-- settings table: ./dynnibal settings -->\n";
  private static final String END = "<!-- end of settings table -->";

  @Test
  void settingsPageTableIsTheGeneratedOne() throws Exception {
    String page = Files.readString(Path.of("..", "docs", "settings.md"));
    int begin = page.indexOf(BEGIN);
    int end = page.indexOf(END);
    assertTrue(
        begin >= 0 && end > begin, "docs/settings.md has no settings table between the markers");
    assertEquals(
        SettingsDoc.settingsMarkdown(),
        page.substring(begin + BEGIN.length(), end),
        "docs/settings.md's settings table is stale: paste the output of ./dynnibal settings");
  }

  @Test
  void everyKeyIsItsFieldNameAndHasADescription() {
    java.util.Set<String> declared = new java.util.TreeSet<>();
    for (SettingsTable.Entry e : SettingsTable.ENTRIES) {
      if (e.declaration().key().isEmpty()) {
        assertEquals(SettingsTable.keyOf(e.field().getName()), e.key());
      } else {
        declared.add(e.key() + "=" + e.field().getName());
      }
      assertTrue(e.declaration().value().length() > 10, e.key() + " has no real description");
      assertNotNull(SettingsDoc.defaultValue(e.key()), e.key());
    }
    // Only the sampler group's name field has a key of its own (the group is the sampler).
    assertEquals(java.util.Set.of("sampler=name"), declared);
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
