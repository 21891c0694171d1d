package io.dynnibal.cli;

import java.util.List;

/**
 * Commands another module adds to {@code dynnibal} without this module depending on it: {@link
 * DynnibalCli} finds every implementation on the classpath with {@link java.util.ServiceLoader}
 * (listed in {@code META-INF/services/io.dynnibal.cli.CommandPlugin}) and adds its commands after
 * its own, before {@code help}. The benchmarks module adds {@code bench}, {@code experiment} and
 * {@code soak} so.
 *
 * <p>An implementation needs a public no-argument constructor. Each call of {@link #commands}
 * returns new objects: a command object holds the options of one parse.
 */
public interface CommandPlugin {
  /**
   * The commands, each an instance of a class annotated with picocli's {@code @Command} (its name
   * is the command's); a name already taken is an error.
   */
  List<Object> commands();
}
