package io.dynnibal.jobs.config;

import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.TowerKind;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.negatives.NegativesPool;
import io.dynnibal.negatives.UnnamedShare;
import io.dynnibal.sampler.Sampler;
import io.dynnibal.sampler.SamplerSettings;
import io.dynnibal.settings.Setting;
import io.dynnibal.training.SamplingCorrection;
import java.io.IOException;
import java.io.Reader;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Every setting of the streaming training job, each declared once in the settings group of its
 * concern: a field whose name is the key in camel case, whose initial value is the default,
 * annotated with its description and bounds ({@link Setting}). Built from a properties file,
 * overridden by {@code key=value} flags, checked by {@link #validate()}, which names every problem
 * at once ({@link SettingsChecks}). {@code ./dynnibal settings} prints the table; docs/settings.md
 * holds a copy a test keeps equal.
 *
 * <p>The job hands each operator only what it reads ({@code OperatorSettings}, {@code
 * ShardSettings}); no operator holds this object.
 */
public final class TrainingJobConfig implements Serializable {
  private static final long serialVersionUID = 3L;

  /** What the sinks' transactions outlive the checkpoint timeout by (restarts, the interval). */
  static final int TRANSACTION_MARGIN_MINUTES = 15;

  /** Brokers, client properties and topics. */
  public final KafkaSettings kafka = new KafkaSettings();

  /** Parallelism, pace, checkpoints, snapshots, seed and length of the run. */
  public final JobSettings job = new JobSettings();

  /** The dual encoder. */
  public final ModelSettings model = new ModelSettings();

  /** The batch and the optimiser's schedule. */
  public final TrainingSettings training = new TrainingSettings();

  /** What every sampler shares: the dose, the mode, the correction, the pool. */
  public final NegativesSettings negatives = new NegativesSettings();

  /** Which sampler, and each sampler's own settings. */
  public final SamplerSettings sampler = new SamplerSettings();

  /** The Nyström cache and the SG tree. */
  public final IndexSettings index = new IndexSettings();

  /** Model updates to the shards every w steps, approximate or exact. */
  public final ReencodeSettings reencode = new ReencodeSettings();

  /** The chosen sampler with its settings (validate first). */
  public Sampler sampler() {
    return sampler.chosen();
  }

  /** The dual encoder the model settings describe. */
  public DualEncoderConfig model() {
    return model.encoderConfig();
  }

  /** {@code reencode.exact.per.batch} with its default resolved for the configured tower. */
  public int reencodeExactPerBatch() {
    if (reencode.reencodeExactPerBatch >= 0) {
      return reencode.reencodeExactPerBatch;
    }
    return TowerKind.of(model.modelTower) == TowerKind.TRANSFORMER ? 512 : 16384;
  }

  /** The negatives.mode setting as the sampler applies it (validate first). */
  public NegativesMode negativesMode() {
    return sampler().negativesMode(NegativesMode.of(negatives.negativesMode));
  }

  /** The negatives.correction setting (validate first). */
  public SamplingCorrection.Mode negativesCorrection() {
    return SamplingCorrection.Mode.of(negatives.negativesCorrection);
  }

  /** The negatives.pool setting (validate first). */
  public NegativesPool negativesPool() {
    return NegativesPool.of(negatives.negativesPool);
  }

  /** The negatives.unnamed.share setting, seeded by the job's seed. */
  public UnnamedShare unnamedShare() {
    return new UnnamedShare(negatives.negativesUnnamedShare, job.seed);
  }

  /** What the shards mine per query: the dose, or the candidates to re-score when more. */
  public int minedPerExample() {
    return Math.max(negatives.negativesPerExample, negatives.negativesCandidatesPerExample);
  }

  /** Whether the trainer re-scores the shards' candidates (and the shards offer more than k). */
  public boolean rescoresCandidates() {
    return negatives.negativesCandidatesPerExample > negatives.negativesPerExample
        && sampler.problem() == null
        && sampler().shardsMine();
  }

  /** Hard negatives a step shares (at most), by the sampler, dose and batch size. */
  public int hardNegativesPerStep() {
    return sampler().hardNegatives(negatives.negativesPerExample, training.batchSize);
  }

  /** Uniform draws a step makes, by the sampler, dose and batch size. */
  public int uniformDrawsPerStep() {
    return sampler()
        .uniformDraws(
            negatives.negativesUniform, negatives.negativesPerExample, training.batchSize);
  }

  public String topic(String name) {
    return kafka.topicPrefix + name;
  }

  public String targetsTopic() {
    return kafka.topicTargets.isEmpty() ? topic("targets") : kafka.topicTargets;
  }

  public String pairsTopic() {
    return kafka.topicPairs.isEmpty() ? topic("pairs") : kafka.topicPairs;
  }

  public String modelUpdatesTopic() {
    return topic("model-updates");
  }

  public String metricsTopic() {
    return topic("metrics");
  }

  public String deadLettersTopic() {
    return topic("dead-letters");
  }

  /** The trainer's progress, read back to pace the query batches ({@code mining.lead}). */
  public String progressTopic() {
    return topic("progress");
  }

  /** Every problem, or an empty list: each setting's bounds, then what settings need together. */
  public List<String> problems() {
    return SettingsChecks.problems(this);
  }

  /**
   * How long the sinks' Kafka transactions may stay open ({@code kafka.transaction.timeout.ms}, or
   * the checkpoint timeout plus {@value #TRANSACTION_MARGIN_MINUTES} min). A sink's transaction
   * opens at one checkpoint and commits when the next completes; the broker aborts it once this has
   * passed, and the commit then fails with only a logged error: whatever the transaction held
   * (steps' metrics, a model update, dead letters) would be gone. So it must exceed the longest
   * checkpoint, and the restart that commits a completed checkpoint's transactions.
   */
  public Duration transactionTimeout() {
    String set = kafka.kafkaProperties.get("transaction.timeout.ms");
    if (set == null) {
      return job.checkpointTimeout.plusMinutes(TRANSACTION_MARGIN_MINUTES);
    }
    try {
      return Duration.ofMillis(Long.parseLong(set.trim()));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "kafka.transaction.timeout.ms must be milliseconds, got \"" + set + "\"");
    }
  }

  /**
   * Throws with every problem listed when the configuration is not usable; makes relative
   * directories absolute ({@link JobSettings#resolveDirectories}).
   */
  public TrainingJobConfig validate() {
    List<String> problems = problems();
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(
          "bad configuration:\n  - " + String.join("\n  - ", problems));
    }
    job.resolveDirectories();
    return this;
  }

  /**
   * Bootstrap servers plus the {@code kafka.*} properties: what every Kafka client of the job is
   * given.
   */
  public Properties clientProperties() {
    Properties p = new Properties();
    p.putAll(kafka.kafkaProperties);
    p.put("bootstrap.servers", kafka.bootstrapServers);
    return p;
  }

  /**
   * The configuration as properties, one key per setting (what {@link #apply} reads); literal
   * secrets are redacted, config provider references ({@link SecretReferences}) shown as they are.
   */
  public Map<String, String> toProperties() {
    Map<String, String> m = toPropertiesWithSecrets();
    kafka.kafkaProperties.forEach(
        (k, v) -> {
          if (SecretReferences.isLiteralSecret(k, v)) {
            m.put("kafka." + k, "[redacted]");
          }
        });
    return m;
  }

  /** The same with secrets: to hand the configuration to a job, never to print it. */
  public Map<String, String> toPropertiesWithSecrets() {
    Map<String, String> m = new TreeMap<>();
    for (SettingsTable.Entry e : SettingsTable.ENTRIES) {
      m.put(e.key(), e.format(this));
    }
    kafka.kafkaProperties.forEach((k, v) -> m.put("kafka." + k, v));
    return m;
  }

  /** An independent copy, secrets included (every setting goes through its declaration). */
  public TrainingJobConfig copy() {
    TrainingJobConfig c = new TrainingJobConfig();
    for (SettingsTable.Entry e : SettingsTable.ENTRIES) {
      e.set(c, e.format(this));
    }
    c.kafka.kafkaProperties.putAll(kafka.kafkaProperties);
    return c;
  }

  /** Sets one key; unknown keys and unparseable values are errors that name the key. */
  public TrainingJobConfig apply(String key, String value) {
    String k = key.trim();
    String v = value.trim();
    if (k.startsWith("kafka.") && k.length() > "kafka.".length()) {
      kafka.kafkaProperties.put(k.substring("kafka.".length()), v);
      return this;
    }
    SettingsTable.Entry entry = SettingsTable.entry(k);
    if (entry == null) {
      throw new IllegalArgumentException(
          "unknown configuration key \""
              + key
              + "\"; known keys: "
              + SettingsTable.keys()
              + " and kafka.<client property>");
    }
    entry.set(this, v);
    return this;
  }

  /**
   * Sets every key of {@code properties} (in key order, so that a bad key is reported the same way
   * every time).
   */
  public TrainingJobConfig applyAll(Properties properties) {
    for (String key : new TreeMap<>(properties).keySet().stream().map(Object::toString).toList()) {
      apply(key, properties.getProperty(key));
    }
    return this;
  }

  /** Sets every key of a properties file. */
  public TrainingJobConfig applyFile(Path file) throws IOException {
    Properties properties = new Properties();
    try (Reader reader = Files.newBufferedReader(file)) {
      properties.load(reader);
    }
    return applyAll(properties);
  }

  /** Sets {@code key=value} overrides in order. */
  public TrainingJobConfig applyOverrides(List<String> overrides) {
    for (String override : overrides) {
      int eq = override.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("override \"" + override + "\" is not key=value");
      }
      apply(override.substring(0, eq), override.substring(eq + 1));
    }
    return this;
  }

  /** Defaults, then the file (if any), then {@code key=value} overrides in order. */
  public static TrainingJobConfig load(Path file, List<String> overrides) throws IOException {
    TrainingJobConfig config = new TrainingJobConfig();
    if (file != null) {
      config.applyFile(file);
    }
    return config.applyOverrides(overrides);
  }
}
