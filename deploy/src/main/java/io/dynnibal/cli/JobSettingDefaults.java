package io.dynnibal.cli;

import io.dynnibal.jobs.config.SettingsDoc;
import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Defaults of command options that mirror a job setting, taken from the setting's declaration: an
 * option whose {@code descriptionKey} is a setting key (e.g. {@code model.buckets}) defaults to
 * that setting's default, so the CLI never holds a second copy of it.
 */
public final class JobSettingDefaults implements IDefaultValueProvider {
  @Override
  public String defaultValue(ArgSpec argSpec) {
    if (argSpec instanceof OptionSpec option && !option.descriptionKey().isEmpty()) {
      return SettingsDoc.defaultValue(option.descriptionKey());
    }
    return null;
  }
}
