package io.dynnibal.jobs.config;

import io.dynnibal.model.DualEncoderConfig;
import io.dynnibal.model.TowerKind;
import io.dynnibal.model.features.FeatureConfig;
import io.dynnibal.negatives.NegativesMode;
import io.dynnibal.negatives.NegativesPool;
import io.dynnibal.negatives.Sampler;
import io.dynnibal.negatives.UnnamedShare;
import io.dynnibal.training.SamplingCorrection;
import io.dynnibal.training.TrainerConfig;
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
 * Every setting of the streaming training job, each declared once: a field whose name is the key in
 * camel case, whose initial value is the default, annotated with its description and bounds ({@link
 * Setting}). Built from a properties file, overridden by {@code key=value} flags, checked by {@link
 * #validate()}, which names every problem at once. {@code ./dynnibal settings} prints the table;
 * the README's copy is checked against it.
 *
 * <p>The job hands each operator only what it reads ({@link OperatorSettings}); no operator holds
 * this object.
 */
public final class TrainingJobConfig implements Serializable {
  private static final long serialVersionUID = 2L;
  private static final String TOPIC_NAME = "[A-Za-z0-9._-]*";
  private static final String TOPIC_HINT = "letters, digits, '.', '_' and '-' only";

  @Setting(
      value = "Kafka brokers, HOST:PORT[,HOST:PORT...]",
      pattern = "[^\\s,]+:\\d+(,[^\\s,]+:\\d+)*",
      patternHint = "HOST:PORT[,HOST:PORT...]")
  public String bootstrapServers = "127.0.0.1:9092";

  /**
   * Client properties for every Kafka client of the job (sources and sinks), set as {@code
   * kafka.<property>}. Secrets never appear in {@link #toProperties()} (redacted).
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

  @Setting(value = "parallelism of the shard and merge operators", min = 1)
  public int parallelism = 2;

  @Setting(value = "index shards (keys of the shard operator)", min = 1)
  public int shards = 2;

  /**
   * How far the shards may mine ahead of the trainer, in query batches. Without a bound the sources
   * fill every buffer on the way, a shard that runs faster than another mines ten batches or more
   * before the trainer takes the first, and a model update reaches the trainer only behind all of
   * them (13 steps, 5 s for a map update in {@code bench pipeline}). Two keep the shards busy while
   * the trainer steps: the shards mine batch b + 2 while the trainer trains b + 1.
   */
  @Setting(
      value =
          "query batches the shards may mine ahead of the last batch the trainer took (the trainer"
              + " reports each batch it takes on the progress topic; 0: no bound, as fast as the"
              + " sources read)",
      min = 0)
  public int miningLead = 2;

  @Setting(value = "checkpoint directory (a URI)", required = true)
  public String checkpointDir = "file:///tmp/dynnibal/checkpoints";

  @Setting(value = "time between checkpoints, e.g. 5s or 500ms", min = 0, aboveMin = true)
  public Duration checkpointInterval = Duration.ofSeconds(5);

  /**
   * Longer than Flink's 10 minutes, because a shard key that re-encodes its targets exactly at once
   * (a shard that missed a version, or any exact cycle with reencode.exact.per.batch 0) holds every
   * checkpoint until it is done, and an expired checkpoint fails the job: a transformer encodes
   * about 100 targets a second per core, so half of a 117,659-target corpus takes ten minutes on
   * one. The sinks' Kafka transactions must outlive the longest checkpoint: see {@link
   * #transactionTimeout}.
   */
  @Setting(
      value =
          "time a checkpoint may take before it expires and the job restarts from the last one,"
              + " e.g. 30m; the sinks' Kafka transactions get this plus "
              + TRANSACTION_MARGIN_MINUTES
              + " min unless kafka.transaction.timeout.ms says otherwise (the broker's"
              + " transaction.max.timeout.ms must allow it)",
      min = 0,
      aboveMin = true)
  public Duration checkpointTimeout = Duration.ofMinutes(30);

  /** What the sinks' transactions outlive the checkpoint timeout by (restarts, the interval). */
  static final int TRANSACTION_MARGIN_MINUTES = 15;

  @Setting("unaligned checkpoints (barriers overtake buffered batches)")
  public boolean checkpointUnaligned = true;

  /**
   * Flink's default is 100 ms. A batch crosses five network hops on its way to the trainer and the
   * trainer's report one more on its way back to {@link #miningLead}'s pace: with the debloated
   * buffers smaller than a batch, the last part of each record waited up to the timeout at every
   * hop. 0 sends every record as it is written. The job's records are few and large (a batch, a
   * shard's reply, a merged batch), and a positive timeout costs a Flink thread per output edge and
   * subtask that wakes every interval whether or not anything was written (21 threads in the local
   * job, 0.07 of a core at 5 ms); the per-target records (indexing, upserts) lost no throughput in
   * {@code bench scale} by being sent one by one.
   */
  @Setting(
      value =
          "longest a record waits in a network buffer before Flink sends it; 0 sends each at once"
              + " (Flink's execution.buffer-timeout.interval)",
      min = 0)
  public Duration bufferTimeout = Duration.ZERO;

  @Setting("Snappy-compressed checkpoints and savepoints (restores fast; see TrainingJob)")
  public boolean checkpointCompression = true;

  @Setting(value = "directory of model versions and final models", required = true)
  public String snapshotDir = "/tmp/dynnibal/snapshots";

  @Setting(
      "fault drills (`soak`): a trainer that finds this file deletes it and fails its task before"
          + " the step, as a crash would; empty: off")
  public String faultDrillFile = "";

  @Setting(
      "query batches wait for the targets on the topic at the job's start to be indexed, until this"
          + " long passes with no target coming")
  public Duration targetsFirstMaxWait = Duration.ofMinutes(2);

  @Setting(value = "queries per training step (B)", min = 1)
  public int batchSize = 128;

  /**
   * The paper draws 64 per example (B x 64 shared negatives a step). On 2 CPU cores the trainer's
   * cost grows with the candidates it encodes (B positives + B x k hard + uniform), so the default
   * is 1: every example gets a hard negative of its own and a step encodes 320 candidates.
   */
  @Setting(
      value =
          "hard negatives drawn for each query (its own positive excluded), shared across the"
              + " batch",
      min = 1)
  public int negativesPerExample = 1;

  @Setting(
      "how hard negatives are chosen: sample (from the softmax exp(beta score)) or top-k (the"
          + " highest-scoring)")
  public String negativesMode = NegativesMode.SAMPLE.id;

  /**
   * Sample mode draws from {@code exp(sharpness beta score)}: above 1 the draws lean towards the
   * hardest targets, between the model's own softmax (1) and top-k (the limit). The correction
   * counts each draw by the probability it was drawn with, so the loss still estimates the softmax
   * at the model's beta.
   */
  @Setting(
      value =
          "sample mode: the softmax hard negatives are drawn from is exp(sharpness beta score) (1:"
              + " the model's own; above 1 leans towards the hardest, top-k is the limit)",
      min = 0,
      aboveMin = true)
  public double negativesSharpness = 1;

  /** See {@link SamplingCorrection} for what the correction estimates and why it matters. */
  @Setting(
      "how the loss counts each candidate: logq (its logit less the log of how many times the"
          + " step expected to draw it, so the candidates estimate the softmax over every target)"
          + " or none (the softmax over the candidates as drawn)")
  public String negativesCorrection = SamplingCorrection.Mode.LOGQ.id;

  /** See {@link NegativesPool} for why a pool of named positives exists and what it changes. */
  @Setting(
      "which targets the shards draw negatives from: all (every target, the paper's protocol) or"
          + " positives (those a training pair has named as its positive so far)")
  public String negativesPool = NegativesPool.ALL.id;

  /** See {@link UnnamedShare} for why a share between the two pools exists. */
  @Setting(
      value =
          "under negatives.pool=positives, the share of targets no pair has named that join the"
              + " pool too, drawn anew for each model version (0: named targets only; 1: every"
              + " target)",
      min = 0,
      max = 1)
  public double negativesUnnamedShare = 0;

  /**
   * The shards encode queries with the model version they hold (tens of steps old) and score the
   * cache; re-scoring lets the trainer choose among their candidates with its current parameters,
   * as the negative cache does with its fresh query embeddings.
   */
  @Setting(
      value =
          "candidates the shards offer per query for the trainer to re-score with its current"
              + " model before it draws negatives.per.example of them (0: none, the shards'"
              + " choice is final)",
      min = 0)
  public int negativesCandidatesPerExample = 0;

  /**
   * The paper trains 4,000-8,000 steps on uniform negatives before it switches to DyNNIBAL: hard
   * negatives of an untrained model are noise. The shards still mine during the warm-up (their
   * answers are dropped), so the switch costs no restart.
   */
  @Setting(
      value =
          "steps trained on uniform (and in-batch) negatives only before hard negatives join (0:"
              + " from the first step)",
      min = 0)
  public int uniformWarmupSteps = 0;

  /**
   * The measurement costs a full-dimension encoding of every target per model version in each shard
   * (what exhaustive mining pays): off by default, on in {@code ./dynnibal experiment}.
   */
  @Setting(
      value =
          "queries of each batch whose hard negatives are compared with exact mining over every"
              + " target (fidelity: overlap_topk, logit_ratio, mass_ratio in the metrics; 0: off)",
      min = 0)
  public int fidelityProbes = 0;

  @Setting(value = "uniform negatives per step (the re-encoding regression's data)", min = 0)
  public int negativesUniform = 64;

  @Setting(value = "steps between approximate re-encodings (the paper's w)", min = 1)
  public int reencodeEvery = 100;

  /**
   * Approximate re-encoding is the paper's economy for a tower that moves a little per cycle
   * (fine-tuning). Trained from scratch, the tower moves far between early cycles and a d' x d' map
   * loses much of it (the bag tower at d' = d = 128: held-out cosine .47, .77 and .90 at the first
   * three cycles, .96-.98 later): the cache then drifts further from the model with every cycle,
   * since nothing re-encodes it. (The first cycle, which draws the landmarks, is now always exact.)
   */
  @Setting(
      value =
          "re-encode every target exactly at a cycle whose map's held-out cosine to exact"
              + " re-encoding is below this (0: never; the cycle that draws the landmarks always is)",
      min = 0,
      max = 1)
  public double reencodeExactBelow = 0;

  /**
   * An exact cycle off the shards' critical path: each shard key applies the cycle's map at once,
   * answers the next batches at the new version, and from the second of them re-encodes this many
   * targets exactly after each batch until all are (ExactRefinement), the tree serving the map's
   * approximation meanwhile and built once from the exact vectors at the end. Re-encoding at once
   * stalls the key for the whole pass: seconds for the bag tower (the trainer waits; such an update
   * reached it 5.8-8.4 s after it was emitted in bench pipeline), minutes for a transformer,
   * holding every checkpoint. For the bag tower 16,384 a batch finishes a Debian shard's pass in 2
   * groups, a WordNet shard's in 4: the update's first batch came 0.6-1.2 s after it was emitted,
   * and the experiment's recall did not move on either corpus (see the README). Hence the default,
   * -1: 512 for the transformer tower, 16,384 for the others.
   */
  @Setting(
      value =
          "exact re-encode cycles: targets each shard key re-encodes per batch after applying the"
              + " cycle's map at once (0: all at once, before the next batch; -1: 512 for the"
              + " transformer tower, 16384 for the others)",
      min = -1)
  public int reencodeExactPerBatch = -1;

  /** {@link #reencodeExactPerBatch} with its default resolved for the configured tower. */
  public int reencodeExactPerBatch() {
    if (reencodeExactPerBatch >= 0) {
      return reencodeExactPerBatch;
    }
    return TowerKind.of(modelTower) == TowerKind.TRANSFORMER ? 512 : 16384;
  }

  @Setting(value = "Nyström landmarks d' (the cache's dimension)", min = 2)
  public int landmarks = 64;

  @Setting(value = "regression sample size s' (reservoir of uniform negatives)", min = 4)
  public int regressionSamples = 2048;

  @Setting(value = "score scale beta (inverse temperature)", min = 0, aboveMin = true)
  public float scoreScale = 20f;

  @Setting(
      "negative sampler: in-batch, uniform, stochastic-negative-mining, negative-cache,"
          + " exhaustive, dynnibal-mh or dynnibal-rejection")
  public String sampler = Sampler.DYNNIBAL_MH.id;

  @Setting(
      value = "stochastic negative mining: fraction of targets in the pool",
      min = 0,
      aboveMin = true,
      max = 1)
  public double snmPoolFraction = 0.01;

  @Setting(value = "stochastic negative mining: steps between pool redraws", min = 1)
  public int snmRefreshEvery = 100;

  @Setting(value = "negative cache: targets held (FIFO)", min = 1)
  public int negativeCacheSize = 1024;

  @Setting("seed of parameters, sampling and every other random choice")
  public long seed = 42L;

  @Setting(value = "stop training after this many steps (0: never)", min = 0)
  public long maxSteps = 0;

  @Setting(value = "also keep the model every this many steps (0: only the final one)", min = 0)
  public int keepModelEvery = 0;

  @Setting(value = "peak learning rate", min = 0, aboveMin = true)
  public float learningRate = 2e-3f;

  @Setting(
      value = "largest global gradient norm a step applies; larger ones are scaled down (0: off)",
      min = 0)
  public float gradientClipNorm = TrainerConfig.DEFAULT_CLIP_NORM;

  @Setting(value = "learning-rate warm-up steps", min = 0)
  public int warmupSteps = 100;

  @Setting(value = "steps of the learning-rate decay (0: constant after warm-up)", min = 0)
  public int decaySteps = 0;

  @Setting(value = "hash buckets of the features", min = 16)
  public int modelBuckets = FeatureConfig.DEFAULT.buckets();

  @Setting(value = "embedding table width", min = 1)
  public int modelEmbeddingDim = DualEncoderConfig.DEFAULT.embeddingDim();

  @Setting(value = "hidden layer width", min = 1)
  public int modelHiddenDim = DualEncoderConfig.DEFAULT.hiddenDim();

  @Setting(value = "embedding size d", min = 1)
  public int modelOutputDim = DualEncoderConfig.DEFAULT.outputDim();

  @Setting("tower kind: bag, set-transformer or transformer (a pretrained BERT-family encoder)")
  public String modelTower = TowerKind.BAG.id;

  @Setting(
      value =
          "features a set-transformer reads, or a transformer's tokens per text ([CLS] and [SEP]"
              + " included)",
      min = 1)
  public int modelMaxTokens = DualEncoderConfig.DEFAULT.maxTokens();

  @Setting(
      "a transformer tower's weights: all-minilm-l6-v2 (bundled) or a Hugging Face directory"
          + " (config.json, model.safetensors, tokenizer.json or vocab.txt)")
  public String modelCheckpoint = io.dynnibal.model.transformer.BertCheckpoint.MINILM;

  @Setting(
      value = "a transformer's tokens per query, [CLS] and [SEP] included (0: model.max.tokens)",
      min = 0)
  public int modelQueryMaxTokens = 0;

  @Setting(
      value =
          "a transformer's top layers that fine-tune, with the projection; the others and the"
              + " embeddings stay as the checkpoint has them (0: all layers and the embeddings)",
      min = 0)
  public int modelTrainableLayers = 0;

  @Setting(value = "SG tree base (level radius ratio)", min = 1, aboveMin = true)
  public double treeBase = 1.3;

  @Setting(
      value =
          "MH in top-k mode: the proposal keeps the closest clusters holding this many targets per"
              + " negative",
      min = 0)
  public int mhCandidatesPerNegative = 8;

  @Setting(value = "MH in sample mode: proposals per chain (one chain per negative)", min = 1)
  public int mhChainLength = 8;

  /**
   * Eq. 6 draws uniformly inside a cluster, so near the query (clusters of radius 0.3 at beta = 20)
   * it misjudges targets' weights by up to e^12 and the chain rarely proposes the heaviest ones. On
   * the Debian corpus in the streaming job (1,000 steps, the experiment's settings) 64 / 1,024 took
   * the picks' run-mean softmax mass from 0.80 to 0.92-1.00 of exact sampling's and the logit ratio
   * from 0.94 to 0.97-0.99, R@1 unchanged; apart from training (bench sampler-fidelity) at about
   * the same time per query. See the README's samplers section.
   */
  @Setting(
      value =
          "MH in sample mode: the proposal draws from the exact softmax inside clusters of at most"
              + " this many targets, uniformly inside larger ones (0: uniformly inside every"
              + " cluster, the paper's Eq. 6)",
      min = 0)
  public int mhExactInside = 64;

  @Setting(
      value =
          "MH in sample mode: the proposal weighs the heaviest clusters of mh.exact.inside targets or"
              + " fewer by their exact softmax mass until they hold this many targets (0: none; no"
              + " effect when mh.exact.inside is 0)",
      min = 0)
  public int mhExactTargets = 1024;

  /**
   * The proposal's quality is the budget of clusters, and what it takes grows with the shard: on a
   * trained model ({@code ./dynnibal bench sampler-fidelity}, one tree of every target) 1,600
   * clusters gave Debian's 63,665 targets 0.80-0.89 of exact sampling's softmax mass, while
   * WordNet's 117,659 needed 6,400 for 0.94-0.98 (1,600: 0.62, 3,200: 0.77); the MH chain's length,
   * FindClustering's deepest radius and a larger exact inside barely mattered. So the budget is a
   * share of the shard: 5 % is the 1,600 Debian's fidelity was measured at (two shards of 32 k),
   * 2,900 for a WordNet shard. The cost per query grows with it (FindClustering scores every child
   * of the nodes it splits), which {@code mh.max.clusters} caps. The shard's targets are all it
   * stores with a cache vector, in the pool or not: under {@code negatives.pool=positives} the pool
   * starts empty and grows, and a share of the pool itself left MH few clusters for most of a run.
   */
  @Setting(
      value =
          "MH: FindClustering's budget of clusters per query, as a share of the shard's targets (at"
              + " most mh.max.clusters; 0: mh.max.clusters alone)",
      min = 0,
      max = 1)
  public double mhClusterShare = 0.05;

  @Setting(
      value =
          "MH: FindClustering's frontier, clusters kept per query at most (the cap of"
              + " mh.cluster.share)",
      min = 0)
  public int mhMaxClusters = 4096;

  @Setting(
      value = "rejection sampling: target ratio max P/Q of the partition",
      min = 1,
      aboveMin = true)
  public double rejectionGamma = 100;

  @Setting(value = "rejection sampling: clusters FindClustering may split off", min = 0)
  public int rejectionMaxClusters = 2000;

  @Setting("target ids whose use as a negative the metrics count, comma-separated")
  public String watchTargets = "";

  public String topic(String name) {
    return topicPrefix + name;
  }

  public String targetsTopic() {
    return topicTargets.isEmpty() ? topic("targets") : topicTargets;
  }

  public String pairsTopic() {
    return topicPairs.isEmpty() ? topic("pairs") : topicPairs;
  }

  /** The negatives.mode setting (validate first). */
  public NegativesMode negativesMode() {
    return NegativesMode.of(negativesMode);
  }

  /** The negatives.correction setting (validate first). */
  public SamplingCorrection.Mode negativesCorrection() {
    return SamplingCorrection.Mode.of(negativesCorrection);
  }

  /** The negatives.pool setting (validate first). */
  public NegativesPool negativesPool() {
    return NegativesPool.of(negativesPool);
  }

  /** The negatives.unnamed.share setting, seeded by the job's seed. */
  public UnnamedShare unnamedShare() {
    return new UnnamedShare(negativesUnnamedShare, seed);
  }

  /** What the shards mine per query: the dose, or the candidates to re-score when more. */
  public int minedPerExample() {
    return Math.max(negativesPerExample, negativesCandidatesPerExample);
  }

  /** Whether the trainer re-scores the shards' candidates (and the shards offer more than k). */
  public boolean rescoresCandidates() {
    return negativesCandidatesPerExample > negativesPerExample
        && sampler().mining != Sampler.Mining.TRAINER_CACHE;
  }

  /** Hard negatives a step shares (at most), by the sampler, dose and batch size. */
  public int hardNegativesPerStep() {
    return sampler().hardNegatives(negativesPerExample, batchSize);
  }

  /** Uniform draws a step makes, by the sampler, dose and batch size. */
  public int uniformDrawsPerStep() {
    return sampler().uniformDraws(negativesUniform, negativesPerExample, batchSize);
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

  /** The trainer's progress, read back to pace the query batches (see {@link #miningLead}). */
  public String progressTopic() {
    return topic("progress");
  }

  public DualEncoderConfig model() {
    FeatureConfig f = FeatureConfig.DEFAULT;
    FeatureConfig features =
        new FeatureConfig(
            modelBuckets, f.maxWords(), f.charNgramWords(), f.minCharN(), f.maxCharN());
    return new DualEncoderConfig(
        features,
        modelEmbeddingDim,
        modelHiddenDim,
        modelOutputDim,
        true,
        scoreScale,
        TowerKind.of(modelTower),
        modelMaxTokens,
        modelCheckpoint,
        null,
        modelQueryMaxTokens,
        modelTrainableLayers);
  }

  /** What the checkpoint's shape allows, in the settings' names. */
  private void transformerProblems(List<String> p) {
    io.dynnibal.model.transformer.BertShape shape;
    try {
      shape = io.dynnibal.model.transformer.BertCheckpoint.load(modelCheckpoint).shape();
    } catch (IllegalArgumentException | java.io.UncheckedIOException e) {
      p.add("model.checkpoint: " + e.getMessage());
      return;
    }
    int positions = shape.maxPositions();
    if (modelMaxTokens < 3 || modelMaxTokens > positions) {
      p.add(
          "model.max.tokens must be 3 to "
              + positions
              + " for this checkpoint, got "
              + modelMaxTokens);
    }
    if (modelQueryMaxTokens != 0 && (modelQueryMaxTokens < 3 || modelQueryMaxTokens > positions)) {
      p.add(
          "model.query.max.tokens must be 0 (model.max.tokens) or 3 to "
              + positions
              + ", got "
              + modelQueryMaxTokens);
    }
    if (modelTrainableLayers > shape.layers()) {
      p.add(
          "model.trainable.layers must be 0 (all) to "
              + shape.layers()
              + " (the checkpoint's layers), got "
              + modelTrainableLayers);
    }
  }

  /** Every problem, or an empty list: each setting's bounds, then what settings need together. */
  public List<String> problems() {
    List<String> p = new ArrayList<>();
    for (SettingsTable.Entry e : SettingsTable.ENTRIES) {
      String problem = e.problem(this);
      if (problem != null) {
        p.add(problem);
      }
    }
    if (landmarks > modelOutputDim) {
      p.add(
          "landmarks (d' = "
              + landmarks
              + ") must not exceed the encoder's output dimension "
              + modelOutputDim);
    }
    if (regressionSamples < 2 * landmarks) {
      p.add(
          "regression.samples (s' = "
              + regressionSamples
              + ") must be at least twice landmarks ("
              + landmarks
              + "): a re-encode cycle fits d' landmarks and a d' x d' map from s' samples");
    }
    try {
      Duration transaction = transactionTimeout();
      if (checkpointTimeout != null
          && checkpointInterval != null
          && transaction.compareTo(checkpointTimeout.plus(checkpointInterval)) <= 0) {
        p.add(
            "kafka.transaction.timeout.ms ("
                + transaction.toMillis()
                + ") must exceed checkpoint.timeout plus checkpoint.interval ("
                + checkpointTimeout.plus(checkpointInterval).toMillis()
                + " ms): the broker aborts a transaction that outlives it, and what a slower"
                + " checkpoint's transaction held would be lost");
      }
    } catch (IllegalArgumentException e) {
      p.add(e.getMessage());
    }
    if (!Sampler.NAMES.contains(sampler)) {
      p.add("sampler must be one of " + Sampler.NAMES + ", got " + sampler);
    }
    if (!NegativesMode.NAMES.contains(negativesMode)) {
      p.add("negatives.mode must be one of " + NegativesMode.NAMES + ", got " + negativesMode);
    }
    if (!SamplingCorrection.Mode.NAMES.contains(negativesCorrection)) {
      p.add(
          "negatives.correction must be one of "
              + SamplingCorrection.Mode.NAMES
              + ", got "
              + negativesCorrection);
    }
    if (!NegativesPool.NAMES.contains(negativesPool)) {
      p.add("negatives.pool must be one of " + NegativesPool.NAMES + ", got " + negativesPool);
    } else if (negativesUnnamedShare > 0 && negativesPool() != NegativesPool.POSITIVES) {
      p.add(
          "negatives.unnamed.share applies to negatives.pool=positives (under all every target is"
              + " in the pool); got pool "
              + negativesPool);
    }
    if (negativesUniform < 1 && !Sampler.IN_BATCH.id.equals(sampler)) {
      p.add(
          "negatives.uniform must be at least 1 (except for in-batch): uniform negatives are the"
              + " re-encoding regression's data, and model updates are how the shards get new"
              + " parameters");
    }
    if (!TowerKind.NAMES.contains(modelTower)) {
      p.add("model.tower must be one of " + TowerKind.NAMES + ", got " + modelTower);
    } else if (TowerKind.of(modelTower) == TowerKind.TRANSFORMER) {
      transformerProblems(p);
    }
    return p;
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
    String set = kafkaProperties.get("transaction.timeout.ms");
    if (set == null) {
      return checkpointTimeout.plusMinutes(TRANSACTION_MARGIN_MINUTES);
    }
    try {
      return Duration.ofMillis(Long.parseLong(set.trim()));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "kafka.transaction.timeout.ms must be milliseconds, got \"" + set + "\"");
    }
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

  /**
   * Bootstrap servers plus the {@code kafka.*} properties: what every Kafka client of the job is
   * given.
   */
  public Properties clientProperties() {
    Properties p = new Properties();
    p.putAll(kafkaProperties);
    p.put("bootstrap.servers", bootstrapServers);
    return p;
  }

  /**
   * The configuration as properties, one key per setting (what {@link #apply} reads); secrets are
   * redacted.
   */
  public Map<String, String> toProperties() {
    Map<String, String> m = toPropertiesWithSecrets();
    kafkaProperties.keySet().stream()
        .filter(SettingsTable::isSecret)
        .forEach(k -> m.put("kafka." + k, "[redacted]"));
    return m;
  }

  /** The same with secrets: to hand the configuration to a job, never to print it. */
  public Map<String, String> toPropertiesWithSecrets() {
    Map<String, String> m = new TreeMap<>();
    for (SettingsTable.Entry e : SettingsTable.ENTRIES) {
      m.put(e.key(), e.format(this));
    }
    kafkaProperties.forEach((k, v) -> m.put("kafka." + k, v));
    return m;
  }

  /** An independent copy, secrets included (every setting goes through its declaration). */
  public TrainingJobConfig copy() {
    TrainingJobConfig c = new TrainingJobConfig();
    for (SettingsTable.Entry e : SettingsTable.ENTRIES) {
      e.set(c, e.format(this));
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
