package io.dynnibal.tests.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.JobConfiguration;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.jobs.training.TrainingJob;
import io.dynnibal.local.EmbeddedKafkaBroker;
import io.dynnibal.tests.harness.TrainingJobs;
import io.dynnibal.tests.harness.WorkDirs;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.junit.jupiter.api.Test;

/**
 * A savepoint restores into a later build of the job only if every stateful operator keeps its id:
 * without an explicit uid Flink derives one from the graph's shape, so adding an operator would
 * orphan the Kafka sources' offsets (a resumed job would train on every pair again) unless restored
 * with allowNonRestoredState.
 */
class SavepointCompatibilityTest {
  @Test
  void everyOperatorOfTheJobHasAnExplicitUid() throws Exception {
    Path work = WorkDirs.fresh("uids");
    try (EmbeddedKafkaBroker kafka = EmbeddedKafkaBroker.start(work.resolve("kafka"))) {
      TrainingJobConfig config = TrainingJobs.smallConfig(kafka, work, "uids");
      JobTopics.createMissing(kafka.clientProperties(), config, 1, (short) 1);
      StreamExecutionEnvironment env =
          StreamExecutionEnvironment.getExecutionEnvironment(JobConfiguration.of(config));
      TrainingJob.build(env, config);
      List<String> withoutUid =
          env.getStreamGraph().getStreamNodes().stream()
              .filter(node -> node.getTransformationUID() == null)
              .map(StreamNode::getOperatorName)
              .toList();
      assertEquals(List.of(), withoutUid, "operators whose id depends on the graph's shape");
    }
  }
}
