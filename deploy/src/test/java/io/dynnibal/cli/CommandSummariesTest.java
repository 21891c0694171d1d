package io.dynnibal.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/** What {@code --help} and the command list show: summaries and the options' shared shapes. */
class CommandSummariesTest {

  /** The first description line is what a parent's command list shows: it must stand alone. */
  @Test
  void everyCommandsSummaryIsOneCompleteSentence() {
    List<String> bad = new ArrayList<>();
    collect(DynnibalCli.commandLine(), bad);
    assertEquals(List.of(), bad);
  }

  @Test
  void theSharedOptionsKeepTheirNamesAndArity() {
    CommandLine cli = DynnibalCli.commandLine();
    Map<String, CommandLine> commands = cli.getSubcommands();
    CommandSpec publish = commands.get("publish").getCommandSpec();
    assertTrue(publish.findOption("--bootstrap").required());
    assertEquals(String.class, publish.findOption("--bootstrap").type());
    assertTrue(publish.findOption("--kafka-property").isMultiValue());
    assertTrue(publish.findOption("--kafka-config") != null);
    assertTrue(!publish.findOption("--targets").required());
    assertTrue(!publish.findOption("--pairs").required());

    CommandSpec train = commands.get("train").getCommandSpec();
    assertTrue(train.findOption("--targets").required());
    assertTrue(train.findOption("--train").required());
    assertTrue(!train.findOption("--eval").required());

    CommandSpec demo = commands.get("demo").getCommandSpec();
    for (String name : List.of("--targets", "--train", "--eval", "--config", "--set")) {
      assertTrue(!demo.findOption(name).required(), name);
    }
    for (String name : List.of("demo", "train", "eval", "export", "publish")) {
      OptionSpec json = commands.get(name).getCommandSpec().findOption("--json");
      assertEquals(java.nio.file.Path.class, json.type(), name);
    }
    for (String name : List.of("search", "version")) {
      OptionSpec json = commands.get(name).getCommandSpec().findOption("--json");
      assertEquals(boolean.class, json.type(), name);
    }
    assertTrue(commands.get("eval").getCommandSpec().findOption("--targets").required());
    assertTrue(!commands.get("search").getCommandSpec().findOption("--targets").required());
  }

  private static void collect(CommandLine command, List<String> bad) {
    for (CommandLine sub : command.getSubcommands().values()) {
      CommandSpec spec = sub.getCommandSpec();
      if (sub.getCommand() instanceof CommandLine.HelpCommand) {
        continue;
      }
      String[] description = spec.usageMessage().description();
      String summary = description.length == 0 ? "" : description[0].strip();
      if (summary.isEmpty()
          || !Character.isUpperCase(summary.charAt(0))
          || !summary.endsWith(".")) {
        bad.add(spec.qualifiedName() + ": " + summary);
      }
      collect(sub, bad);
    }
  }
}
