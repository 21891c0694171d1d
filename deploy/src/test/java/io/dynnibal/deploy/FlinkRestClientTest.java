package io.dynnibal.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** What a user sees of Flink's errors. */
class FlinkRestClientTest {
  @Test
  void flinkErrorsLoseTheirStackFramesNotTheirMessages() {
    String trace =
        "org.apache.flink.client.program.ProgramInvocationException: The main method caused an error\n"
            + "\tat org.apache.flink.client.program.PackagedProgram.callMainMethod(PackagedProgram.java:373)\n"
            + "Caused by: java.lang.IllegalStateException: cannot read the end offsets of t\n"
            + "\t... 12 more\n";
    assertEquals(
        "org.apache.flink.client.program.ProgramInvocationException: The main method caused an error\n"
            + "  Caused by: java.lang.IllegalStateException: cannot read the end offsets of t",
        FlinkRestClient.withoutStackFrames(trace));
  }
}
