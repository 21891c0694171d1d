package io.dynnibal.jobs.training;

import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.FeatureConfig;
import io.dynnibal.negatives.Sampler;
import io.dynnibal.trainer.TrainerSettings;
import java.io.IOException;
import java.io.Reader;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Everything the streaming training job needs, in one typed, validated place. Built from a
 * properties file (keys as in {@link #toProperties()}), overridden by {@code key=value} flags,
 * checked by {@link #validate()} which names every problem at once.
 */
public final class TrainingJobConfig implements Serializable {
  private static final long serialVersionUID = 1L;

  // Kafka
  public String bootstrapServers = "127.0.0.1:9092";

  /**
   * Client properties for every Kafka client of the job (sources and sinks), set as {@code
   * kafka.<property>}: e.g. {@code kafka.security.protocol=SASL_SSL}, {@code
   * kafka.sasl.mechanism=PLAIN}, {@code kafka.sasl.jaas.config=...}, {@code
   * kafka.ssl.truststore.location=...}. Secrets never appear in {@link #toProperties()} (redacted).
   */
  public java.util.TreeMap<String, String> kafkaProperties = new java.util.TreeMap<>();

  public String topicPrefix = "dynnibal.";

  /**
   * The targets topic, when not {@code <topic.prefix>targets} (e.g. a dataset shared by several
   * runs).
   */
  public String targetsTopicName = "";

  /** The pairs topic, when not {@code <topic.prefix>pairs}. */
  public String pairsTopicName = "";

  public String groupId = "dynnibal-trainer";
  // Flink
  public int parallelism = 2;
  public int shards = 2;
  public String checkpointDir = "file:///tmp/dynnibal/checkpoints";
  public Duration checkpointInterval = Duration.ofSeconds(5);

  /**
   * Unaligned checkpoints (barriers overtake buffered batches): a short feedback edge under
   * backpressure.
   */
  public boolean unalignedCheckpoints = true;

  /**
   * Snappy-compressed checkpoints and savepoints. Flink 2.2 restores uncompressed operator state
   * one read() system call per byte, so the trainer's ~200 MB took minutes to restore; compressed,
   * seconds.
   */
  public boolean checkpointCompression = true;

  public String snapshotDir = "/tmp/dynnibal/snapshots";

  /**
   * Query batches wait for the targets that were on the targets topic at the job's start, at most
   * this long (see {@code PairsAfterTargets}).
   */
  public Duration targetsFirstMaxWait = Duration.ofMinutes(2);

  // Training
  public int batchSize = 128;
  public int sampledNegatives = 64;
  public int uniformNegatives = 64;

  /** Steps between approximate re-encodings (the paper's w). */
  public int reencodeEvery = 100;

  /** Nyström landmarks d'. */
  public int landmarks = 64;

  /** Regression sample size s' (the reservoir of uniform negatives). */
  public int regressionSamples = 2048;

  public float scoreScale = 20f;

  /** One of {@link Sampler#NAMES}. */
  public String sampler = "dynnibal-mh";

  /**
   * Stochastic negative mining: the fraction of targets in the pool (the paper's 1 %, 3 %, 10 %).
   */
  public double snmPoolFraction = 0.01;

  /** Stochastic negative mining: steps between pool redraws. */
  public int snmRefreshEvery = 100;

  /** Negative cache: targets held (FIFO). */
  public int negativeCacheSize = 1024;

  public long seed = 42L;

  /** Stop training after this many steps (0: never). Batches after it are counted, not trained. */
  public long maxSteps = 0;

  /**
   * Also keep the model every this many steps in {@code <snapshot dir>/run-<id>/kept/model-<step>}
   * (0: only the final one): for learning curves and for going back to an earlier model.
   */
  public int keepModelEvery = 0;

  public float learningRate = 2e-3f;
  public int warmupSteps = 100;

  /** Steps of the planned run for the learning-rate decay (0: constant after warm-up). */
  public int decaySteps = 0;

  // Model
  public int buckets = FeatureConfig.DEFAULT.buckets();
  public int embeddingDim = DualEncoderConfig.DEFAULT.embeddingDim();
  public int hiddenDim = DualEncoderConfig.DEFAULT.hiddenDim();
  public int outputDim = DualEncoderConfig.DEFAULT.outputDim();

  /** {@code bag} or {@code set-transformer}. */
  public String tower = "bag";

  // Index
  public double treeBase = 1.3;

  /** MH proposal: closest clusters holding this many targets per requested negative. */
  public int candidatesPerNegative = 8;

  /** FindClustering's frontier: clusters kept per query (the paper's 100). */
  public int maxClusters = 100;

  /** Rejection sampling: the partition's target ratio max P/Q (about the restarts per sample). */
  public double rejectionGamma = 100;

  /** Rejection sampling: clusters FindClustering may split off to reach that ratio. */
  public int rejectionMaxClusters = 2000;

  /**
   * Hard negatives each shard samples per query, before the batch's shared set is chosen. With B =
   * 128 queries and 64 shared negatives, one per query already offers twice what is kept (two
   * halved the shards' sampling time).
   */
  public int negativesPerQuery = 1;

  /**
   * Target ids whose use as a negative is counted in the metrics records ({@code
   * watched_negatives}), comma-separated: a way to audit a sampler (e.g. that a deleted target is
   * never drawn again). Empty by default.
   */
  public String watchTargets = "";

  public String topic(String name) {
    return topicPrefix + name;
  }

  public String targetsTopic() {
    return targetsTopicName.isEmpty() ? topic("targets") : targetsTopicName;
  }

  public String pairsTopic() {
    return pairsTopicName.isEmpty() ? topic("pairs") : pairsTopicName;
  }

  /** The sampler setting as a {@link Sampler} (validate first). */
  public Sampler sampler() {
    return Sampler.of(sampler);
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

  public DualEncoderConfig model() {
    FeatureConfig f = FeatureConfig.DEFAULT;
    return new DualEncoderConfig(
        new FeatureConfig(buckets, f.maxWords(), f.charNgramWords(), f.minCharN(), f.maxCharN()),
        embeddingDim,
        hiddenDim,
        outputDim,
        true,
        scoreScale,
        tower.equals("set-transformer")
            ? io.dynnibal.model.TowerKind.SET_TRANSFORMER
            : io.dynnibal.model.TowerKind.BAG,
        32);
  }

  /** What the trainer operator reads of these settings. */
  public TrainerSettings trainerSettings() {
    return new TrainerSettings(
        model(),
        sampler(),
        seed,
        learningRate,
        warmupSteps,
        decaySteps,
        maxSteps,
        reencodeEvery,
        landmarks,
        regressionSamples,
        sampledNegatives,
        negativesPerQuery,
        negativeCacheSize,
        keepModelEvery,
        snapshotDir,
        pairsTopic(),
        List.of(watchTargets.split(",")));
  }

  /** Every problem, or an empty list. */
  public List<String> problems() {
    List<String> p = new ArrayList<>();
    if (bootstrapServers == null || !bootstrapServers.matches("[^\\s,]+:\\d+(,[^\\s,]+:\\d+)*")) {
      p.add("bootstrap.servers must be HOST:PORT[,HOST:PORT...], got " + bootstrapServers);
    }
    if (topicPrefix == null || !topicPrefix.matches("[A-Za-z0-9._-]*")) {
      p.add("topic.prefix may hold only letters, digits, '.', '_' and '-', got " + topicPrefix);
    }
    atLeast(p, "parallelism", parallelism, 1);
    atLeast(p, "shards", shards, 1);
    atLeast(p, "batch.size", batchSize, 1);
    atLeast(p, "negatives.sampled", sampledNegatives, 0);
    atLeast(p, "negatives.uniform", uniformNegatives, 0);
    atLeast(p, "negatives.per.query", negativesPerQuery, 1);
    atLeast(p, "reencode.every", reencodeEvery, 1);
    atLeast(p, "landmarks", landmarks, 2);
    if (landmarks > outputDim) {
      p.add(
          "landmarks (d' = "
              + landmarks
              + ") must not exceed the encoder's output dimension "
              + outputDim);
    }
    if (regressionSamples < 2 * landmarks) {
      p.add(
          "regression.samples (s' = "
              + regressionSamples
              + ") must be at least twice landmarks ("
              + landmarks
              + "): a re-encode cycle fits d' landmarks and a d' x d' map from s' samples");
    }
    if (uniformNegatives < 1 && !Sampler.IN_BATCH.id.equals(sampler)) {
      p.add(
          "negatives.uniform must be at least 1 (except for in-batch): uniform negatives are the re-encoding"
              + " regression's data, and model updates are how the shards get new parameters");
    }
    if (!(scoreScale > 0) || Float.isInfinite(scoreScale)) {
      p.add("score.scale must be a positive finite number, got " + scoreScale);
    }
    if (!Sampler.NAMES.contains(sampler)) {
      p.add("sampler must be one of " + Sampler.NAMES + ", got " + sampler);
    }
    if (!(snmPoolFraction > 0 && snmPoolFraction <= 1)) {
      p.add("snm.pool.fraction must be in (0, 1], got " + snmPoolFraction);
    }
    atLeast(p, "snm.refresh.every", snmRefreshEvery, 1);
    atLeast(p, "negative.cache.size", negativeCacheSize, 1);
    atLeast(p, "keep.model.every", keepModelEvery, 0);
    for (String[] topic :
        new String[][] {{"topic.targets", targetsTopicName}, {"topic.pairs", pairsTopicName}}) {
      if (topic[1] == null || !topic[1].matches("[A-Za-z0-9._-]*")) {
        p.add(topic[0] + " may hold only letters, digits, '.', '_' and '-', got " + topic[1]);
      }
    }
    if (maxSteps < 0) {
      p.add("max.steps must be >= 0, got " + maxSteps);
    }
    if (!(learningRate > 0) || Float.isInfinite(learningRate)) {
      p.add("learning.rate must be a positive finite number, got " + learningRate);
    }
    atLeast(p, "warmup.steps", warmupSteps, 0);
    atLeast(p, "decay.steps", decaySteps, 0);
    atLeast(p, "model.buckets", buckets, 16);
    atLeast(p, "model.embedding.dim", embeddingDim, 1);
    atLeast(p, "model.hidden.dim", hiddenDim, 1);
    atLeast(p, "model.output.dim", outputDim, 1);
    if (!List.of("bag", "set-transformer").contains(tower)) {
      p.add("model.tower must be bag or set-transformer, got " + tower);
    }
    if (!(treeBase > 1)) {
      p.add("tree.base must be greater than 1, got " + treeBase);
    }
    atLeast(p, "mh.candidates.per.negative", candidatesPerNegative, 0);
    atLeast(p, "mh.max.clusters", maxClusters, 0);
    if (!(rejectionGamma > 1)) {
      p.add("rejection.gamma must be greater than 1, got " + rejectionGamma);
    }
    atLeast(p, "rejection.max.clusters", rejectionMaxClusters, 0);
    if (checkpointInterval == null
        || checkpointInterval.isNegative()
        || checkpointInterval.isZero()) {
      p.add(
          "checkpoint.interval must be a positive duration such as 5s or 500ms, got "
              + checkpointInterval);
    }
    if (targetsFirstMaxWait == null || targetsFirstMaxWait.isNegative()) {
      p.add(
          "targets.first.max.wait must be a duration such as 2m or 30s, got "
              + targetsFirstMaxWait);
    }
    if (checkpointDir == null || checkpointDir.isBlank()) {
      p.add("checkpoint.dir is required");
    }
    if (snapshotDir == null || snapshotDir.isBlank()) {
      p.add("snapshot.dir is required");
    }
    return p;
  }

  /** Throws with every problem listed when the configuration is not usable. */
  public TrainingJobConfig validate() {
    List<String> problems = problems();
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(
          "bad configuration:\n  - " + String.join("\n  - ", problems));
    }
    return this;
  }

  private static void atLeast(List<String> problems, String key, long value, long min) {
    if (value < min) {
      problems.add(key + " must be at least " + min + ", got " + value);
    }
  }

  /**
   * Bootstrap servers plus the {@code kafka.*} properties: what every Kafka client of the job is
   * given.
   */
  public java.util.Properties clientProperties() {
    java.util.Properties p = new java.util.Properties();
    p.putAll(kafkaProperties);
    p.put("bootstrap.servers", bootstrapServers);
    return p;
  }

  /** Whether a Kafka property holds a secret (passwords, JAAS configs with credentials, keys). */
  static boolean isSecret(String property) {
    String k = property.toLowerCase(java.util.Locale.ROOT);
    return k.contains("password")
        || k.contains("jaas")
        || k.contains("secret")
        || k.endsWith(".key")
        || k.contains("token");
  }

  /**
   * One configuration key: how it is printed and how it is set. The table below is the single list
   * of keys.
   */
  private record Setting(
      String key,
      java.util.function.Function<TrainingJobConfig, Object> get,
      java.util.function.BiConsumer<TrainingJobConfig, String> set) {}

  private static final List<Setting> SETTINGS =
      List.of(
          new Setting(
              "bootstrap.servers", c -> c.bootstrapServers, (c, v) -> c.bootstrapServers = v),
          new Setting("topic.prefix", c -> c.topicPrefix, (c, v) -> c.topicPrefix = v),
          new Setting("topic.targets", c -> c.targetsTopicName, (c, v) -> c.targetsTopicName = v),
          new Setting("topic.pairs", c -> c.pairsTopicName, (c, v) -> c.pairsTopicName = v),
          new Setting("group.id", c -> c.groupId, (c, v) -> c.groupId = v),
          new Setting(
              "parallelism", c -> c.parallelism, (c, v) -> c.parallelism = Integer.parseInt(v)),
          new Setting("shards", c -> c.shards, (c, v) -> c.shards = Integer.parseInt(v)),
          new Setting("checkpoint.dir", c -> c.checkpointDir, (c, v) -> c.checkpointDir = v),
          new Setting(
              "checkpoint.interval",
              c -> c.checkpointInterval.toMillis() + "ms",
              (c, v) -> c.checkpointInterval = duration(v)),
          new Setting(
              "targets.first.max.wait",
              c -> c.targetsFirstMaxWait.toMillis() + "ms",
              (c, v) -> c.targetsFirstMaxWait = duration(v)),
          new Setting(
              "checkpoint.unaligned",
              c -> c.unalignedCheckpoints,
              (c, v) -> c.unalignedCheckpoints = bool("checkpoint.unaligned", v)),
          new Setting(
              "checkpoint.compression",
              c -> c.checkpointCompression,
              (c, v) -> c.checkpointCompression = bool("checkpoint.compression", v)),
          new Setting("snapshot.dir", c -> c.snapshotDir, (c, v) -> c.snapshotDir = v),
          new Setting("batch.size", c -> c.batchSize, (c, v) -> c.batchSize = Integer.parseInt(v)),
          new Setting(
              "negatives.sampled",
              c -> c.sampledNegatives,
              (c, v) -> c.sampledNegatives = Integer.parseInt(v)),
          new Setting(
              "negatives.uniform",
              c -> c.uniformNegatives,
              (c, v) -> c.uniformNegatives = Integer.parseInt(v)),
          new Setting(
              "negatives.per.query",
              c -> c.negativesPerQuery,
              (c, v) -> c.negativesPerQuery = Integer.parseInt(v)),
          new Setting(
              "reencode.every",
              c -> c.reencodeEvery,
              (c, v) -> c.reencodeEvery = Integer.parseInt(v)),
          new Setting("landmarks", c -> c.landmarks, (c, v) -> c.landmarks = Integer.parseInt(v)),
          new Setting(
              "regression.samples",
              c -> c.regressionSamples,
              (c, v) -> c.regressionSamples = Integer.parseInt(v)),
          new Setting(
              "score.scale", c -> c.scoreScale, (c, v) -> c.scoreScale = Float.parseFloat(v)),
          new Setting("sampler", c -> c.sampler, (c, v) -> c.sampler = v),
          new Setting(
              "snm.pool.fraction",
              c -> c.snmPoolFraction,
              (c, v) -> c.snmPoolFraction = Double.parseDouble(v)),
          new Setting(
              "snm.refresh.every",
              c -> c.snmRefreshEvery,
              (c, v) -> c.snmRefreshEvery = Integer.parseInt(v)),
          new Setting(
              "negative.cache.size",
              c -> c.negativeCacheSize,
              (c, v) -> c.negativeCacheSize = Integer.parseInt(v)),
          new Setting("seed", c -> c.seed, (c, v) -> c.seed = Long.parseLong(v)),
          new Setting("max.steps", c -> c.maxSteps, (c, v) -> c.maxSteps = Long.parseLong(v)),
          new Setting(
              "keep.model.every",
              c -> c.keepModelEvery,
              (c, v) -> c.keepModelEvery = Integer.parseInt(v)),
          new Setting(
              "learning.rate", c -> c.learningRate, (c, v) -> c.learningRate = Float.parseFloat(v)),
          new Setting(
              "warmup.steps", c -> c.warmupSteps, (c, v) -> c.warmupSteps = Integer.parseInt(v)),
          new Setting(
              "decay.steps", c -> c.decaySteps, (c, v) -> c.decaySteps = Integer.parseInt(v)),
          new Setting("model.buckets", c -> c.buckets, (c, v) -> c.buckets = Integer.parseInt(v)),
          new Setting(
              "model.embedding.dim",
              c -> c.embeddingDim,
              (c, v) -> c.embeddingDim = Integer.parseInt(v)),
          new Setting(
              "model.hidden.dim", c -> c.hiddenDim, (c, v) -> c.hiddenDim = Integer.parseInt(v)),
          new Setting(
              "model.output.dim", c -> c.outputDim, (c, v) -> c.outputDim = Integer.parseInt(v)),
          new Setting("model.tower", c -> c.tower, (c, v) -> c.tower = v),
          new Setting("tree.base", c -> c.treeBase, (c, v) -> c.treeBase = Double.parseDouble(v)),
          new Setting(
              "mh.candidates.per.negative",
              c -> c.candidatesPerNegative,
              (c, v) -> c.candidatesPerNegative = Integer.parseInt(v)),
          new Setting(
              "mh.max.clusters", c -> c.maxClusters, (c, v) -> c.maxClusters = Integer.parseInt(v)),
          new Setting(
              "rejection.gamma",
              c -> c.rejectionGamma,
              (c, v) -> c.rejectionGamma = Double.parseDouble(v)),
          new Setting(
              "rejection.max.clusters",
              c -> c.rejectionMaxClusters,
              (c, v) -> c.rejectionMaxClusters = Integer.parseInt(v)),
          new Setting("watch.targets", c -> c.watchTargets, (c, v) -> c.watchTargets = v));

  /**
   * The configuration as properties, one key per setting (what {@link #apply} reads); secrets are
   * redacted.
   */
  public Map<String, String> toProperties() {
    Map<String, String> m = toPropertiesWithSecrets();
    kafkaProperties.keySet().stream()
        .filter(TrainingJobConfig::isSecret)
        .forEach(k -> m.put("kafka." + k, "[redacted]"));
    return m;
  }

  /** The same with secrets: to hand the configuration to a job, never to print it. */
  public Map<String, String> toPropertiesWithSecrets() {
    Map<String, String> m = new TreeMap<>();
    for (Setting setting : SETTINGS) {
      m.put(setting.key(), String.valueOf(setting.get().apply(this)));
    }
    kafkaProperties.forEach((k, v) -> m.put("kafka." + k, v));
    return m;
  }

  /** An independent copy, secrets included (every setting goes through the one settings table). */
  public TrainingJobConfig copy() {
    TrainingJobConfig c = new TrainingJobConfig();
    for (Setting setting : SETTINGS) {
      setting.set().accept(c, String.valueOf(setting.get().apply(this)));
    }
    c.kafkaProperties.putAll(kafkaProperties);
    return c;
  }

  /** Sets one key; unknown keys and unparseable values are errors that name the key. */
  public TrainingJobConfig apply(String key, String value) {
    String k = key.trim();
    String v = value.trim();
    if (k.startsWith("kafka.") && k.length() > "kafka.".length()) {
      kafkaProperties.put(k.substring("kafka.".length()), v);
      return this;
    }
    Setting setting =
        SETTINGS.stream()
            .filter(s -> s.key().equals(k))
            .findFirst()
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "unknown configuration key \""
                            + key
                            + "\"; known keys: "
                            + SETTINGS.stream().map(Setting::key).toList()
                            + " and kafka.<client property>"));
    try {
      setting.set().accept(this, v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "configuration key " + key + ": \"" + value + "\" is not a number");
    }
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

  private static boolean bool(String key, String v) {
    if (!v.equals("true") && !v.equals("false")) {
      throw new IllegalArgumentException(
          "configuration key " + key + ": \"" + v + "\" is not true or false");
    }
    return Boolean.parseBoolean(v);
  }

  /** {@code 500ms}, {@code 5s}, {@code 2m} or plain milliseconds. */
  static Duration duration(String v) {
    if (v.endsWith("ms")) {
      return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
    }
    if (v.endsWith("s")) {
      return Duration.ofMillis(
          Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 1000));
    }
    if (v.endsWith("m")) {
      return Duration.ofSeconds(
          Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 60));
    }
    return Duration.ofMillis(Long.parseLong(v));
  }
}
