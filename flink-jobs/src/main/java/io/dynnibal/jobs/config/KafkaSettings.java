package io.dynnibal.jobs.config;

import io.dynnibal.settings.Setting;
import java.io.Serializable;
import java.util.TreeMap;

/**
 * The Kafka settings group: where the brokers are, what every client of the job is given, and the
 * topics' names.
 */
public final class KafkaSettings implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final String TOPIC_NAME = "[A-Za-z0-9._-]*";
  private static final String TOPIC_HINT = "letters, digits, '.', '_' and '-' only";

  @Setting(
      value = "Kafka brokers, HOST:PORT[,HOST:PORT...]",
      pattern = "[^\\s,]+:\\d+(,[^\\s,]+:\\d+)*",
      patternHint = "HOST:PORT[,HOST:PORT...]")
  public String bootstrapServers = "127.0.0.1:9092";

  /**
   * Client properties for every Kafka client of the job (sources and sinks), set as {@code
   * kafka.<property>}. Secrets never appear in {@link TrainingJobConfig#toProperties()} (redacted).
   */
  public TreeMap<String, String> kafkaProperties = new TreeMap<>();

  @Setting(
      value = "prefix of the job's topic names",
      pattern = TOPIC_NAME,
      patternHint = TOPIC_HINT)
  public String topicPrefix = "dynnibal.";

  @Setting(
      value = "the targets topic, when not `<topic.prefix>targets` (e.g. shared by several runs)",
      pattern = TOPIC_NAME,
      patternHint = TOPIC_HINT)
  public String topicTargets = "";

  @Setting(
      value = "the pairs topic, when not `<topic.prefix>pairs`",
      pattern = TOPIC_NAME,
      patternHint = TOPIC_HINT)
  public String topicPairs = "";

  @Setting("Kafka consumer group of the job's sources")
  public String groupId = "dynnibal-trainer";
}
