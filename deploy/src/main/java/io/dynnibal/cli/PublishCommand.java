package io.dynnibal.cli;

import io.dynnibal.data.JsonlCorpus;
import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.TrainingJob;
import io.dynnibal.local.CorpusPublisher;
import io.dynnibal.training.ProgressBar;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal publish}: a corpus from JSONL files onto the job's Kafka topics. */
@Command(
    name = "publish",
    defaultValueProvider = JobSettingDefaults.class,
    description = {
      "Publish targets and training pairs from JSONL files (gz or plain) to Kafka as the job reads them: Avro",
      "single-object values, targets keyed by id on the compacted targets topic, pairs keyed by pair id",
      "(<query_id>#<pass>); idempotent producer. Prints the counts and the topics' end offsets."
    })
final class PublishCommand implements Callable<Integer> {
  @Option(
      names = "--bootstrap",
      required = true,
      description = "Kafka bootstrap servers, HOST:PORT[,HOST:PORT].")
  String bootstrap;

  @Option(names = "--targets", description = "Targets JSONL: {target_id, target_text}.")
  Path targets;

  @Option(
      names = "--pairs",
      description = "Training pairs JSONL: {query_id, query_text, target_id}.")
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

  @Option(
      names = "--partitions",
      defaultValue = "2",
      description = "Partitions of created topics (default ${DEFAULT-VALUE}).")
  int partitions;

  @Option(
      names = "--replication",
      defaultValue = "1",
      description = "Replication of created topics (default ${DEFAULT-VALUE}).")
  short replication;

  @Option(
      names = "--kafka-property",
      description =
          "A Kafka client property, key=value (repeatable): security.protocol,"
              + " sasl.mechanism, sasl.jaas.config, ssl.truststore.location, ...")
  List<String> kafkaProperties = new java.util.ArrayList<>();

  @Option(
      names = "--kafka-config",
      description = "Kafka client properties from a file (e.g. the SASL/SSL settings).")
  Path kafkaConfig;

  @Option(names = "--json", description = "Also write the figures as JSON to this file.")
  Path json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (targets == null && pairs == null) {
      throw new ParameterException(
          spec.commandLine(), "nothing to publish: give --targets and/or --pairs");
    }
    TrainingJobConfig config = new TrainingJobConfig();
    config.apply("bootstrap.servers", bootstrap).apply("topic.prefix", topicPrefix);
    List<String> problems =
        config.problems().stream()
            .filter(p -> p.startsWith("bootstrap") || p.startsWith("topic.prefix"))
            .toList();
    if (!problems.isEmpty()) {
      throw new ParameterException(spec.commandLine(), String.join("; ", problems));
    }
    Properties client = new Properties();
    if (kafkaConfig != null) {
      try (var reader = java.nio.file.Files.newBufferedReader(kafkaConfig)) {
        client.load(reader);
      }
    }
    for (String kv : kafkaProperties) {
      int eq = kv.indexOf('=');
      if (eq <= 0) {
        throw new ParameterException(spec.commandLine(), "--kafka-property needs key=value");
      }
      client.put(kv.substring(0, eq), kv.substring(eq + 1));
    }
    client.put("bootstrap.servers", bootstrap);
    client.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
    if (createTopics) {
      TrainingJob.createMissingTopics(client, config, partitions, replication);
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
        List<LabelledQuery> list = JsonlCorpus.readQueries(pairs);
        ProgressBar bar = new ProgressBar(System.err, "pairs", list.size());
        publisher.publishPairs(
            config.pairsTopic(), list, pass, System.currentTimeMillis(), n -> bar.draw(n, ""));
        bar.finish(list.size(), "");
        figures.put("pairs_published", list.size());
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
    BenchCommand.print(figures, json);
    return 0;
  }
}
