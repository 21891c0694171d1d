package io.dynnibal.tests.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dynnibal.cli.DynnibalCli;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** The {@code dynnibal} command line, run in the test's JVM. */
public final class Cli {
  private Cli() {}

  /** Runs {@code args}; returns what it printed (stdout and stderr); fails on another exit code. */
  public static String run(int expectedExit, String... args) {
    PrintStream out = System.out;
    PrintStream err = System.err;
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream capture = new PrintStream(buffer, true, StandardCharsets.UTF_8);
    int exit;
    try {
      System.setOut(capture);
      System.setErr(capture);
      exit = DynnibalCli.execute(args);
    } finally {
      System.setOut(out);
      System.setErr(err);
    }
    String printed = buffer.toString(StandardCharsets.UTF_8);
    assertEquals(expectedExit, exit, args[0] + " printed:\n" + printed);
    return printed;
  }
}
