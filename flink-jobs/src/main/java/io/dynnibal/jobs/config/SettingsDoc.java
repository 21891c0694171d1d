package io.dynnibal.jobs.config;

/**
 * The job's settings for users, read from their declarations: {@code ./dynnibal settings} prints
 * the table, docs/settings.md holds a copy a test keeps equal, and CLI options that mirror a
 * setting take its default from here.
 */
public final class SettingsDoc {
  private SettingsDoc() {}

  /** Every setting as a Markdown table: key, default, what it does (docs/settings.md's copy). */
  public static String settingsMarkdown() {
    return SettingsTable.markdown();
  }

  /** The default of {@code key} as text, or null for no such setting. */
  public static String defaultValue(String key) {
    SettingsTable.Entry e = SettingsTable.entry(key);
    return e == null ? null : e.format(new TrainingJobConfig());
  }
}
