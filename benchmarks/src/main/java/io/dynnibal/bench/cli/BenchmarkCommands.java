package io.dynnibal.bench.cli;

import io.dynnibal.cli.CommandPlugin;
import java.util.List;

/**
 * The harness's front doors on {@code dynnibal}: {@code bench}, {@code experiment} and {@code
 * soak}, added through {@link CommandPlugin} (listed in this module's {@code
 * META-INF/services/io.dynnibal.cli.CommandPlugin}) so that the product's CLI never depends on this
 * module.
 */
public final class BenchmarkCommands implements CommandPlugin {
  @Override
  public List<Object> commands() {
    return List.of(new BenchCommand(), new ExperimentCommand(), new SoakCommand());
  }
}
