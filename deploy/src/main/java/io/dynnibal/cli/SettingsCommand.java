package io.dynnibal.cli;

import io.dynnibal.jobs.config.SettingsDoc;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Prints every job setting with its default and what it does, from the settings' declarations. */
@Command(
    name = "settings",
    description = {
      "Print every job setting with its default and what it does, as a Markdown table.",
      "The settings are the keys of --config files and --set; docs/settings.md's table is this output."
    })
final class SettingsCommand implements Callable<Integer> {
  @Override
  public Integer call() {
    System.out.print(SettingsDoc.settingsMarkdown());
    return 0;
  }
}
