package io.dynnibal.cli;

import io.dynnibal.cli.options.CreatedTopics;
import io.dynnibal.cli.options.JsonOutput;
import io.dynnibal.cli.options.JsonlFiles;
import io.dynnibal.cli.options.KafkaConnection;
import io.dynnibal.data.JsonlCorpus;
import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.JobTopics;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.local.PublishedKeys;
import io.dynnibal.training.ProgressBar;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal publish}: a corpus from JSONL files onto the job's Kafka topics. */
@Command(
    name = "publish",
    defaultValueProvider = JobSettingDefaults.class,
    description = {
      "Publish targets and training pairs from JSONL files (gz or plain) to the job's Kafka topics.",
      "Values are Avro single-object encoded, as the job reads them; targets are keyed by id on the compacted targets",
      "topic, pairs by pair id (<query_id>#<pass>); the producer is idempotent, and a pair id already on the topic is",
      "not sent again. Prints the counts and the topics' end offsets."
    })
final class PublishCommand implements Callable<Integer> {
  @Mixin KafkaConnection kafka;

  @Option(names = "--targets", description = JsonlFiles.TARGETS)
  Path targets;

  @Option(names = "--pairs", description = JsonlFiles.PAIRS)
  Path pairs;

  @Option(
      names = "--topic-prefix",
      descriptionKey = "topic.prefix",
      description = "Topic prefix (default ${DEFAULT-VALUE}).")
  String topicPrefix;

  @Option(
      names = "--pass",
      defaultValue = "0",
      description =
          "Pass name in pair ids (<query_id>#<pass>): publish a file again with another pass for another epoch.")
  String pass;

  @Option(
      names = "--create-topics",
      description = "Create the job's topics first when they are missing.")
  boolean createTopics;

  @Mixin CreatedTopics topics;

  @Mixin JsonOutput json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (targets == null && pairs == null) {
      throw new ParameterException(
          spec.commandLine(), "nothing to publish: give --targets and/or --pairs");
    }
    TrainingJobConfig config = new TrainingJobConfig();
    config.apply("bootstrap.servers", kafka.bootstrap()).apply("topic.prefix", topicPrefix);
    List<String> problems =
        config.problems().stream()
            .filter(p -> p.startsWith("bootstrap") || p.startsWith("topic.prefix"))
            .toList();
    if (!problems.isEmpty()) {
      throw new ParameterException(spec.commandLine(), String.join("; ", problems));
    }
    Properties connection = kafka.clientProperties(spec.commandLine());
    Properties client = new Properties();
    client.putAll(connection);
    client.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
    if (createTopics) {
      JobTopics.createMissing(client, config, topics.partitions(), topics.replication());
    }
    Map<String, Object> figures = new LinkedHashMap<>();
    long start = System.nanoTime();
    try (CorpusPublisher publisher = new CorpusPublisher(client)) {
      if (targets != null) {
        List<TargetText> list = JsonlCorpus.readTargets(targets);
        ProgressBar bar = new ProgressBar(System.err, "targets", list.size());
        publisher.publishTargets(config.targetsTopic(), list, n -> bar.draw(n, ""));
        bar.finish(list.size(), "");
        figures.put("targets_published", list.size());
      }
      if (pairs != null) {
        List<LabelledQuery> read = JsonlCorpus.readQueries(pairs);
        Set<String> onTopic = PublishedKeys.of(connection, config.pairsTopic());
        List<LabelledQuery> list =
            read.stream().filter(q -> !onTopic.contains(CorpusPublisher.pairId(q, pass))).toList();
        if (list.size() < read.size()) {
          System.err.printf(
              "%,d of the %,d pairs of pass %s are on %s already: not sent again%n",
              read.size() - list.size(), read.size(), pass, config.pairsTopic());
        }
        ProgressBar bar = new ProgressBar(System.err, "pairs", list.size());
        publisher.publishPairs(
            config.pairsTopic(), list, pass, System.currentTimeMillis(), n -> bar.draw(n, ""));
        bar.finish(list.size(), "");
        figures.put("pairs_published", list.size());
        figures.put("pairs_already_published", read.size() - list.size());
      }
    }
    figures.put("seconds", Math.round((System.nanoTime() - start) / 1e8) / 10.0);
    try (Admin admin = Admin.create(client)) {
      for (String topic : List.of(config.targetsTopic(), config.pairsTopic())) {
        if ((topic.equals(config.targetsTopic()) && targets == null)
            || (topic.equals(config.pairsTopic()) && pairs == null)) {
          continue;
        }
        var partitionsOf =
            admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions();
        Map<TopicPartition, OffsetSpec> latest = new LinkedHashMap<>();
        partitionsOf.forEach(
            p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
        long end = 0;
        for (var e : admin.listOffsets(latest).all().get().values()) {
          end += e.offset();
        }
        figures.put(topic + "_end_offsets_total", end);
      }
    }
    json.print(figures);
    return 0;
  }
}
