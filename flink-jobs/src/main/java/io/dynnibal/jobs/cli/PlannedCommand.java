package io.dynnibal.jobs.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * A command that users will have but that is not built yet: it is listed in {@code --help} so the shape of the tool
 * is visible, accepts any arguments, says which issue builds it and exits with {@link #NOT_BUILT_YET}. Each entry
 * leaves this table when its issue lands a real command.
 */
final class PlannedCommand implements Callable<Integer> {
  static final int NOT_BUILT_YET = 3;

  private record Plan(String name, String description, int issue) {}

  private static final List<Plan> PLANS =
      List.of(
          new Plan("submit", "Submit the training job to a Flink cluster.", 8));

  private final Plan plan;

  private PlannedCommand(Plan plan) {
    this.plan = plan;
  }

  static void addAll(CommandLine parent) {
    for (Plan plan : PLANS) {
      add(parent, plan.name(), plan.description(), plan.issue());
    }
  }

  /** Adds one planned command under {@code parent}. */
  static void add(CommandLine parent, String name, String description, int issue) {
    CommandSpec spec = CommandSpec.wrapWithoutInspection(new PlannedCommand(new Plan(name, description, issue)));
    spec.usageMessage().description(description + " (not built yet: issue #" + issue + ")");
    spec.parser().unmatchedOptionsArePositionalParams(true);
    spec.addPositional(PositionalParamSpec.builder().arity("0..*").type(String[].class).hidden(true).build());
    parent.addSubcommand(name, new CommandLine(spec));
  }

  @Override
  public Integer call() {
    System.err.println(
        "dynnibal: " + plan.name() + " is not built yet; issue #" + plan.issue() + " builds it. See ./dynnibal --help.");
    return NOT_BUILT_YET;
  }
}
