package io.dynnibal.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.dynnibal.stream.JobMetrics;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The Grafana dashboard charts every metric the job registers, and only those. */
class GrafanaDashboardTest {
  @Test
  void everyPanelQueriesARegisteredMetricAndEveryMetricHasAPanel() throws Exception {
    JsonNode dashboard =
        new ObjectMapper().readTree(Path.of("grafana", "dynnibal-dashboard.json").toFile());
    Pattern metric = Pattern.compile(Pattern.quote(JobMetrics.prometheusName("")) + "(\\w+)");
    Set<String> charted = new TreeSet<>();
    for (JsonNode panel : dashboard.get("panels")) {
      for (JsonNode target : panel.get("targets")) {
        Matcher m = metric.matcher(target.get("expr").asText());
        while (m.find()) {
          charted.add(m.group(1));
        }
      }
    }
    assertEquals(new TreeSet<>(JobMetrics.ALL), charted);
  }
}
