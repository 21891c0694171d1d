package io.dynnibal.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.SecurityOptions;
import org.junit.jupiter.api.Test;

/** What a user sees of Flink's errors, and how --jobmanager reaches a JobManager. */
class FlinkClusterClientTest {
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
        FlinkRestFailures.withoutStackFrames(trace));
  }

  @Test
  void theAddressBecomesTheRestClientsSettings() {
    Configuration plain = FlinkClusterClient.configuration(URI.create("http://10.0.0.7:8082/"));
    assertEquals("10.0.0.7", plain.get(RestOptions.ADDRESS));
    assertEquals(8082, plain.get(RestOptions.PORT));
    assertFalse(plain.get(SecurityOptions.SSL_REST_ENABLED));
    assertFalse(plain.contains(RestOptions.URL_PREFIX));
    assertEquals(0, plain.get(RestOptions.RETRY_MAX_ATTEMPTS), "nothing answering is an answer");

    Configuration proxied =
        FlinkClusterClient.configuration(URI.create("https://flink.example.com/session-a"));
    assertEquals("flink.example.com", proxied.get(RestOptions.ADDRESS));
    assertEquals(443, proxied.get(RestOptions.PORT));
    assertTrue(proxied.get(SecurityOptions.SSL_REST_ENABLED));
    assertEquals("/session-a/", proxied.get(RestOptions.URL_PREFIX));

    assertThrows(
        IllegalArgumentException.class,
        () -> FlinkClusterClient.configuration(URI.create("localhost:8081")));
  }

  @Test
  void nothingAnsweringIsNoOverviewAndAnIoErrorElsewhere() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    URI absent = URI.create("http://127.0.0.1:" + port);
    try (FlinkClusterClient client = new FlinkClusterClient(absent)) {
      assertEquals(URI.create(absent + "/"), client.base());
      assertTrue(client.overview().isEmpty());
      IOException e = assertThrows(IOException.class, client::jobs);
      assertTrue(e.getMessage().contains("is the cluster running?"), e.getMessage());
    }
  }
}
