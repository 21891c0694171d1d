package io.dynnibal.jobs.training;

import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.features.FeatureConfig;
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
 * Everything the streaming training job needs, in one typed, validated place. Built from a properties file (keys as in
 * {@link #toProperties()}), overridden by {@code key=value} flags, checked by {@link #validate()} which names every
 * problem at once.
 */
public final class TrainingJobConfig implements Serializable {
  private static final long serialVersionUID = 1L;

  // Kafka
  public String bootstrapServers = "127.0.0.1:9092";
  /**
   * Client properties for every Kafka client of the job (sources and sinks), set as {@code kafka.<property>}: e.g.
   * {@code kafka.security.protocol=SASL_SSL}, {@code kafka.sasl.mechanism=PLAIN}, {@code kafka.sasl.jaas.config=...},
   * {@code kafka.ssl.truststore.location=...}. Secrets never appear in {@link #toProperties()} (redacted).
   */
  public java.util.TreeMap<String, String> kafkaProperties = new java.util.TreeMap<>();
  public String topicPrefix = "dynnibal.";
  public String groupId = "dynnibal-trainer";
  // Flink
  public int parallelism = 2;
  public int shards = 2;
  public String checkpointDir = "file:///tmp/dynnibal/checkpoints";
  public Duration checkpointInterval = Duration.ofSeconds(5);
  public String snapshotDir = "/tmp/dynnibal/snapshots";
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
  public String sampler = "dynnibal-mh";
  public long seed = 42L;
  /** Stop training after this many steps (0: never). Batches after it are counted, not trained. */
  public long maxSteps = 0;
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
  /**
   * Hard negatives each shard samples per query, before the batch's shared set is chosen. With B = 128 queries and 64
   * shared negatives, one per query already offers twice what is kept (two halved the shards' sampling time).
   */
  public int negativesPerQuery = 1;
  /**
   * Target ids whose use as a negative is counted in the metrics records ({@code watched_negatives}), comma-separated:
   * a way to audit a sampler (e.g. that a deleted target is never drawn again). Empty by default.
   */
  public String watchTargets = "";

  public static final List<String> SAMPLERS = List.of("dynnibal-mh", "dynnibal-rejection", "uniform");

  public String topic(String name) {
    return topicPrefix + name;
  }

  public String targetsTopic() {
    return topic("targets");
  }

  public String pairsTopic() {
    return topic("pairs");
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
    return new DualEncoderConfig(new FeatureConfig(buckets, f.maxWords(), f.charNgramWords(), f.minCharN(),
        f.maxCharN()), embeddingDim, hiddenDim, outputDim, true, scoreScale,
        tower.equals("set-transformer") ? io.dynnibal.model.TowerKind.SET_TRANSFORMER : io.dynnibal.model.TowerKind.BAG,
        32);
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
      p.add("landmarks (d' = " + landmarks + ") must not exceed the encoder's output dimension " + outputDim);
    }
    if (regressionSamples < 2 * landmarks) {
      p.add("regression.samples (s' = " + regressionSamples + ") must be at least twice landmarks (" + landmarks
          + "): a re-encode cycle fits d' landmarks and a d' x d' map from s' samples");
    }
    if (uniformNegatives < 1) {
      p.add("negatives.uniform must be at least 1: uniform negatives are the re-encoding regression's data");
    }
    if (!(scoreScale > 0) || Float.isInfinite(scoreScale)) {
      p.add("score.scale must be a positive finite number, got " + scoreScale);
    }
    if (!SAMPLERS.contains(sampler)) {
      p.add("sampler must be one of " + SAMPLERS + ", got " + sampler);
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
    if (checkpointInterval == null || checkpointInterval.isNegative() || checkpointInterval.isZero()) {
      p.add("checkpoint.interval must be a positive duration such as 5s or 500ms, got " + checkpointInterval);
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
      throw new IllegalArgumentException("bad configuration:\n  - " + String.join("\n  - ", problems));
    }
    return this;
  }

  private static void atLeast(List<String> problems, String key, long value, long min) {
    if (value < min) {
      problems.add(key + " must be at least " + min + ", got " + value);
    }
  }

  /** Bootstrap servers plus the {@code kafka.*} properties: what every Kafka client of the job is given. */
  public java.util.Properties clientProperties() {
    java.util.Properties p = new java.util.Properties();
    p.putAll(kafkaProperties);
    p.put("bootstrap.servers", bootstrapServers);
    return p;
  }

  /** Whether a Kafka property holds a secret (passwords, JAAS configs with credentials, keys). */
  static boolean isSecret(String property) {
    String k = property.toLowerCase(java.util.Locale.ROOT);
    return k.contains("password") || k.contains("jaas") || k.contains("secret") || k.endsWith(".key")
        || k.contains("token");
  }

  /** The configuration as properties, one key per field (what {@link #apply} reads); secrets are redacted. */
  public Map<String, String> toProperties() {
    Map<String, String> m = new TreeMap<>();
    m.put("bootstrap.servers", bootstrapServers);
    kafkaProperties.forEach((k, v) -> m.put("kafka." + k, isSecret(k) ? "[redacted]" : v));
    m.put("topic.prefix", topicPrefix);
    m.put("group.id", groupId);
    m.put("parallelism", Integer.toString(parallelism));
    m.put("shards", Integer.toString(shards));
    m.put("checkpoint.dir", checkpointDir);
    m.put("checkpoint.interval", checkpointInterval.toMillis() + "ms");
    m.put("snapshot.dir", snapshotDir);
    m.put("batch.size", Integer.toString(batchSize));
    m.put("negatives.sampled", Integer.toString(sampledNegatives));
    m.put("negatives.uniform", Integer.toString(uniformNegatives));
    m.put("negatives.per.query", Integer.toString(negativesPerQuery));
    m.put("reencode.every", Integer.toString(reencodeEvery));
    m.put("landmarks", Integer.toString(landmarks));
    m.put("regression.samples", Integer.toString(regressionSamples));
    m.put("score.scale", Float.toString(scoreScale));
    m.put("sampler", sampler);
    m.put("seed", Long.toString(seed));
    m.put("max.steps", Long.toString(maxSteps));
    m.put("learning.rate", Float.toString(learningRate));
    m.put("warmup.steps", Integer.toString(warmupSteps));
    m.put("decay.steps", Integer.toString(decaySteps));
    m.put("model.buckets", Integer.toString(buckets));
    m.put("model.embedding.dim", Integer.toString(embeddingDim));
    m.put("model.hidden.dim", Integer.toString(hiddenDim));
    m.put("model.output.dim", Integer.toString(outputDim));
    m.put("model.tower", tower);
    m.put("tree.base", Double.toString(treeBase));
    m.put("mh.candidates.per.negative", Integer.toString(candidatesPerNegative));
    m.put("mh.max.clusters", Integer.toString(maxClusters));
    m.put("watch.targets", watchTargets);
    return m;
  }

  /** Sets one key; unknown keys and unparseable values are errors that name the key. */
  public TrainingJobConfig apply(String key, String value) {
    String v = value.trim();
    if (key.trim().startsWith("kafka.") && key.trim().length() > "kafka.".length()) {
      kafkaProperties.put(key.trim().substring("kafka.".length()), v);
      return this;
    }
    try {
      switch (key.trim()) {
        case "bootstrap.servers" -> bootstrapServers = v;
        case "topic.prefix" -> topicPrefix = v;
        case "group.id" -> groupId = v;
        case "parallelism" -> parallelism = Integer.parseInt(v);
        case "shards" -> shards = Integer.parseInt(v);
        case "checkpoint.dir" -> checkpointDir = v;
        case "checkpoint.interval" -> checkpointInterval = duration(v);
        case "snapshot.dir" -> snapshotDir = v;
        case "batch.size" -> batchSize = Integer.parseInt(v);
        case "negatives.sampled" -> sampledNegatives = Integer.parseInt(v);
        case "negatives.uniform" -> uniformNegatives = Integer.parseInt(v);
        case "negatives.per.query" -> negativesPerQuery = Integer.parseInt(v);
        case "reencode.every" -> reencodeEvery = Integer.parseInt(v);
        case "landmarks" -> landmarks = Integer.parseInt(v);
        case "regression.samples" -> regressionSamples = Integer.parseInt(v);
        case "score.scale" -> scoreScale = Float.parseFloat(v);
        case "sampler" -> sampler = v;
        case "seed" -> seed = Long.parseLong(v);
        case "max.steps" -> maxSteps = Long.parseLong(v);
        case "learning.rate" -> learningRate = Float.parseFloat(v);
        case "warmup.steps" -> warmupSteps = Integer.parseInt(v);
        case "decay.steps" -> decaySteps = Integer.parseInt(v);
        case "model.buckets" -> buckets = Integer.parseInt(v);
        case "model.embedding.dim" -> embeddingDim = Integer.parseInt(v);
        case "model.hidden.dim" -> hiddenDim = Integer.parseInt(v);
        case "model.output.dim" -> outputDim = Integer.parseInt(v);
        case "model.tower" -> tower = v;
        case "tree.base" -> treeBase = Double.parseDouble(v);
        case "mh.candidates.per.negative" -> candidatesPerNegative = Integer.parseInt(v);
        case "mh.max.clusters" -> maxClusters = Integer.parseInt(v);
        case "watch.targets" -> watchTargets = v;
        default -> throw new IllegalArgumentException("unknown configuration key \"" + key + "\"; known keys: "
            + new TrainingJobConfig().toProperties().keySet());
      }
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("configuration key " + key + ": \"" + value + "\" is not a number");
    }
    return this;
  }

  /** Defaults, then the file (if any), then {@code key=value} overrides in order. */
  public static TrainingJobConfig load(Path file, List<String> overrides) throws IOException {
    TrainingJobConfig config = new TrainingJobConfig();
    if (file != null) {
      Properties properties = new Properties();
      try (Reader reader = Files.newBufferedReader(file)) {
        properties.load(reader);
      }
      for (String key : new TreeMap<>(properties).keySet().stream().map(Object::toString).toList()) {
        config.apply(key, properties.getProperty(key));
      }
    }
    for (String override : overrides) {
      int eq = override.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("override \"" + override + "\" is not key=value");
      }
      config.apply(override.substring(0, eq), override.substring(eq + 1));
    }
    return config;
  }

  /** {@code 500ms}, {@code 5s}, {@code 2m} or plain milliseconds. */
  static Duration duration(String v) {
    if (v.endsWith("ms")) {
      return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
    }
    if (v.endsWith("s")) {
      return Duration.ofMillis(Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 1000));
    }
    if (v.endsWith("m")) {
      return Duration.ofSeconds(Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 60));
    }
    return Duration.ofMillis(Long.parseLong(v));
  }
}
