package io.dynnibal.jobs.config;

import io.dynnibal.settings.Setting;
import java.io.Serializable;
import java.time.Duration;
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

  /**
   * A topic keeps records this long (its {@code retention.ms}); records the job had not read by
   * then are gone, and a job stopped or behind for longer fails rather than skip them (see {@link
   * #acceptDataLoss}).
   */
  @Setting(
      value =
          "how long the pairs topic keeps records (retention.ms, set when the job creates the"
              + " topic): the longest a job may stay stopped or behind and still resume without"
              + " losing pairs",
      min = 0,
      aboveMin = true)
  public Duration topicPairsRetention = Duration.ofDays(7);

  @Setting(
      value =
          "how long the model-updates, progress, metrics and dead-letters topics keep records"
              + " (retention.ms, set when the job creates them); a restore needs the model updates"
              + " after its checkpoint",
      min = 0,
      aboveMin = true)
  public Duration topicRetention = Duration.ofDays(7);

  /**
   * Compaction keeps a delete (a tombstone) this long after cleaning reaches it: a job restoring
   * from a checkpoint older than this may never see the deletes written since, so the restore is
   * refused (see {@code TopicCheck}).
   */
  @Setting(
      value =
          "how long the compacted targets topic keeps deletes (delete.retention.ms, set when the"
              + " job creates the topic): a checkpoint older than that is refused, as deletes since"
              + " may be gone",
      min = 0,
      aboveMin = true)
  public Duration topicTargetsDeleteRetention = Duration.ofDays(7);

  @Setting(
      "go on where records the job was to read are gone (an offset no longer in its topic's log,"
          + " a topic deleted and created again, a checkpoint older than the targets topic keeps"
          + " deletes), logging what was lost; false: the job fails, saying which")
  public boolean acceptDataLoss = false;

  @Setting("Kafka consumer group of the job's sources")
  public String groupId = "dynnibal-trainer";
}
