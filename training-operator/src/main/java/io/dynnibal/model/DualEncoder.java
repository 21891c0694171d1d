package io.dynnibal.model;

import ai.djl.Device;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDManager;
import io.dynnibal.model.features.Features;
import io.dynnibal.model.features.HashedFeaturizer;
import io.dynnibal.model.transformer.BertCheckpoint;
import io.dynnibal.model.transformer.BertEncoderBlock;
import io.dynnibal.model.transformer.TokenBudget;
import io.dynnibal.model.transformer.WordPieceTokenizer;
import java.util.ArrayList;
import java.util.List;

/**
 * The dual encoder f_theta (queries) and f_phi (targets): a {@link HashedFeaturizer} and two {@link
 * Tower}s, or one tower used for both sides when {@link DualEncoderConfig#sharedTowers()}. The
 * networks live on the training device (GPU 0 when libtorch sees one, else the CPU); embedding
 * tables on the heap.
 *
 * <p>Not thread-safe: one encoder per operator instance.
 */
public final class DualEncoder implements AutoCloseable {
  private final DualEncoderConfig config;
  private final HashedFeaturizer featurizer;
  private final WordPieceTokenizer tokenizer;
  private final NDManager manager;
  private final Tower queryTower;
  private final Tower targetTower;

  private DualEncoder(
      DualEncoderConfig config, NDManager manager, Tower queryTower, Tower targetTower) {
    this.config = config;
    this.featurizer = new HashedFeaturizer(config.features());
    this.tokenizer =
        config.towerKind() == TowerKind.TRANSFORMER
            ? BertCheckpoint.load(config.checkpoint()).tokenizer()
            : null;
    this.manager = manager;
    this.queryTower = queryTower;
    this.targetTower = targetTower;
  }

  /** A freshly initialised encoder; the same seed gives the same parameters (on the CPU). */
  public static DualEncoder create(DualEncoderConfig config, long seed) {
    return create(config, seed, TorchRuntime.trainingDevice());
  }

  public static DualEncoder create(DualEncoderConfig config, long seed, Device device) {
    return assemble(config, device, seed, null, null);
  }

  /**
   * An encoder around stored tables (one, or query and target when towers are separate), for a
   * snapshot being loaded; the networks are freshly initialised and the caller loads their
   * parameters.
   */
  public static DualEncoder withTables(
      DualEncoderConfig config,
      Device device,
      long seed,
      java.util.List<SparseEmbeddingTable> tables) {
    int expected = config.sharedTowers() ? 1 : 2;
    if (tables.size() != expected) {
      throw new IllegalArgumentException(
          "expected " + expected + " embedding tables, got " + tables.size());
    }
    return assemble(config, device, seed, tables.get(0), expected == 2 ? tables.get(1) : null);
  }

  /**
   * libtorch's random generator is global: two operators initialising encoders at once in one JVM
   * would interleave their draws and get different networks from the same seed. Initialisation
   * therefore holds this lock.
   */
  private static final Object INITIALISATION = new Object();

  private static DualEncoder assemble(
      DualEncoderConfig config,
      Device device,
      long seed,
      SparseEmbeddingTable queryTable,
      SparseEmbeddingTable targetTable) {
    synchronized (INITIALISATION) {
      return initialise(config, device, seed, queryTable, targetTable);
    }
  }

  private static DualEncoder initialise(
      DualEncoderConfig config,
      Device device,
      long seed,
      SparseEmbeddingTable queryTable,
      SparseEmbeddingTable targetTable) {
    Engine engine = TorchRuntime.engine();
    engine.setRandomSeed((int) seed);
    NDManager manager = engine.newBaseManager(device);
    int rows = config.features().buckets();
    int dim = config.embeddingDim();
    BertCheckpoint pretrained =
        config.towerKind() == TowerKind.TRANSFORMER && queryTable == null
            ? BertCheckpoint.load(config.checkpoint())
            : null;
    SparseEmbeddingTable q =
        queryTable != null
            ? queryTable
            : pretrained != null
                ? wordEmbeddings(pretrained)
                : SparseEmbeddingTable.random(rows, dim, seed);
    Tower query = pretrained(new Tower(q, config, manager), pretrained);
    Tower target = query;
    if (!config.sharedTowers()) {
      SparseEmbeddingTable t =
          targetTable != null
              ? targetTable
              : pretrained != null
                  ? wordEmbeddings(pretrained)
                  : SparseEmbeddingTable.random(rows, dim, seed ^ 0x5DEECE66DL);
      target = pretrained(new Tower(t, config, manager), pretrained);
    }
    return new DualEncoder(config, manager, query, target);
  }

  /** A copy: the checkpoint's arrays are shared by every encoder made from it in this JVM. */
  private static SparseEmbeddingTable wordEmbeddings(BertCheckpoint checkpoint) {
    float[] words = checkpoint.weight("embeddings.word_embeddings.weight").values();
    return SparseEmbeddingTable.of(
        checkpoint.shape().vocabulary(), checkpoint.shape().hidden(), words.clone());
  }

  private static Tower pretrained(Tower tower, BertCheckpoint checkpoint) {
    if (checkpoint != null) {
      ((BertEncoderBlock) tower.body()).load(checkpoint);
      tower.markTrainable();
    }
    return tower;
  }

  public DualEncoderConfig config() {
    return config;
  }

  /**
   * Whether {@link #create} draws any parameter from its seed. A pretrained transformer without a
   * projection loads every parameter from its checkpoint, so every seed gives the same model, and
   * whatever depends only on the untrained model (its recall: a whole-corpus encoding) need be
   * computed once.
   */
  public boolean initialisationUsesSeed() {
    return !(queryTower.body() instanceof BertEncoderBlock q && !q.hasProjection())
        || !(targetTower.body() instanceof BertEncoderBlock t && !t.hasProjection());
  }

  public HashedFeaturizer featurizer() {
    return featurizer;
  }

  /**
   * The features of a query: hashed features, or a transformer's WordPiece token ids in order
   * (weights 1), at most {@link DualEncoderConfig#queryMaxTokens()} of them with {@code [CLS]} and
   * {@code [SEP]}.
   */
  public Features featurizeQuery(String text) {
    return featurize(text, config.queryMaxTokens());
  }

  /** The features of a target: as a query's, at most {@link DualEncoderConfig#maxTokens()}. */
  public Features featurizeTarget(String text) {
    return featurize(text, config.maxTokens());
  }

  /**
   * What the transformer's token budgets cut of these texts, a line for the targets (at {@link
   * DualEncoderConfig#maxTokens()}) and one for the queries (at {@link
   * DualEncoderConfig#queryMaxTokens()}); none for the bag tower, which reads every word.
   */
  public List<String> describeTokenBudgets(List<String> targetTexts, List<String> queryTexts) {
    if (tokenizer == null) {
      return List.of();
    }
    return List.of(
        TokenBudget.measure(tokenizer, targetTexts, config.maxTokens()).describe("targets"),
        TokenBudget.measure(tokenizer, queryTexts, config.queryMaxTokens()).describe("queries"));
  }

  private Features featurize(String text, int maxTokens) {
    if (tokenizer == null) {
      return featurizer.featurize(text);
    }
    int[] ids = tokenizer.encode(text, maxTokens);
    float[] ones = new float[ids.length];
    java.util.Arrays.fill(ones, 1f);
    return new Features(ids, ones);
  }

  public Tower queryTower() {
    return queryTower;
  }

  public Tower targetTower() {
    return targetTower;
  }

  /** The towers whose parameters train: one when shared, else query then target. */
  public List<Tower> distinctTowers() {
    return queryTower == targetTower ? List.of(queryTower) : List.of(queryTower, targetTower);
  }

  public NDManager manager() {
    return manager;
  }

  public Device device() {
    return manager.getDevice();
  }

  /** Unit-norm query embeddings (the fast batch API: featurize once, then call this). */
  public float[][] encodeQueries(List<Features> queries) {
    return queryTower.encode(queries);
  }

  /** Unit-norm target embeddings; used by evaluation and re-encoding for many targets at once. */
  public float[][] encodeTargets(List<Features> targets) {
    return targetTower.encode(targets);
  }

  /**
   * The same on {@code threads} threads, for a caller that owns that many idle cores (evaluation of
   * a whole corpus); see {@link Tower#encode(List, int)}.
   */
  public float[][] encodeTargets(List<Features> targets, int threads) {
    return targetTower.encode(targets, threads);
  }

  public float[][] encodeQueries(List<Features> queries, int threads) {
    return queryTower.encode(queries, threads);
  }

  public float[][] encodeQueryTexts(List<String> texts) {
    List<Features> features = new ArrayList<>(texts.size());
    for (String text : texts) {
      features.add(featurizeQuery(text));
    }
    return encodeQueries(features);
  }

  public float[][] encodeTargetTexts(List<String> texts) {
    return encodeTargets(featurizeTargets(texts));
  }

  public List<Features> featurizeTargets(List<String> texts) {
    List<Features> features = new ArrayList<>(texts.size());
    for (String text : texts) {
      features.add(featurizeTarget(text));
    }
    return features;
  }

  /** beta * <q, t>: the logit of target t for query q. */
  public float score(float[] query, float[] target) {
    double dot = 0;
    for (int i = 0; i < query.length; i++) {
      dot += (double) query[i] * target[i];
    }
    return (float) (config.scoreScale() * dot);
  }

  /**
   * Writes a transformer encoder as a Hugging Face / sentence-transformers directory ({@link
   * io.dynnibal.model.transformer.HuggingFaceExport}): into {@code dir} when the towers are shared,
   * else the query tower into {@code dir/query} and the target tower into {@code dir/target}.
   */
  public void exportHuggingFace(java.nio.file.Path dir) throws java.io.IOException {
    if (config.towerKind() != TowerKind.TRANSFORMER) {
      throw new IllegalArgumentException(
          "only a transformer tower exports as a Hugging Face model; this one is "
              + config.towerKind().id);
    }
    if (queryTower == targetTower) {
      export(queryTower, dir, config.maxTokens());
    } else {
      export(queryTower, dir.resolve("query"), config.queryMaxTokens());
      export(targetTower, dir.resolve("target"), config.maxTokens());
    }
  }

  private void export(Tower tower, java.nio.file.Path dir, int maxTokens)
      throws java.io.IOException {
    io.dynnibal.model.transformer.HuggingFaceExport.write(
        dir,
        (BertEncoderBlock) tower.body(),
        config.bert(),
        tower.table().values(),
        tokenizer,
        maxTokens);
  }

  @Override
  public void close() {
    manager.close();
  }
}
