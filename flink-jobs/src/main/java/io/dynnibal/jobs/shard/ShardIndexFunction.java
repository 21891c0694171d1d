package io.dynnibal.jobs.shard;

import io.dynnibal.model.features.Features;
import io.dynnibal.schemas.AvroTrust;
import io.dynnibal.schemas.DeadLetter;
import io.dynnibal.schemas.ModelUpdate;
import io.dynnibal.state.ExactRefinement;
import io.dynnibal.state.NamedPositives;
import io.dynnibal.state.ShardIndex;
import io.dynnibal.state.ShardTargets;
import io.dynnibal.stream.DeadLetters;
import io.dynnibal.stream.QueryBatch;
import java.util.function.Consumer;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.formats.avro.typeutils.AvroTypeInfo;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

/**
 * One shard of the index per key: targets join and leave at any time, query batches get negatives,
 * model updates move the whole cache and repair the tree. This function is the Flink glue; the work
 * is done by {@link TargetIndexer} (targets), {@link BatchAnswerer} (query batches), {@link
 * ModelUpdateApplier} and {@link GradualReencode} (model updates), over {@link HeapIndexes} (the
 * trees) and {@link TargetPool} (what the trees hold).
 *
 * <p>State: {@link ShardTargets} (RocksDB map state, id -> text + cache vector at the version it
 * was written, and per key the maps from those versions to the current one) is the truth; the SG
 * tree of each shard is a heap cache of it, rebuilt from it on the first use after a start or
 * restore, on the shape each checkpoint keeps of it ({@link TreeShapes}). Each shard key keeps the
 * model update it is at in keyed state (every key receives its own copy of an update); the encoder
 * and projection of a version ({@link ShardModel}) are loaded from it once per subtask ({@link
 * LoadedModels}).
 *
 * <p>Targets and queries are encoded here, with the version the shard holds, so a shard's cache and
 * its queries are always of one version and each reply says which. An update whose version is not
 * above the current one is a duplicate and ignored.
 */
public final class ShardIndexFunction
    extends KeyedCoProcessFunction<Integer, ShardInput, ShardInput, ShardReply>
    implements CheckpointedFunction {
  private static final long serialVersionUID = 1L;
  static final String STAGE = "shard-index";
  private static final ValueStateDescriptor<ModelUpdate> MODEL =
      new ValueStateDescriptor<>("model", new AvroTypeInfo<>(ModelUpdate.class));

  private final ShardSettings settings;
  private final int[] shardKeys;

  private transient ValueState<ModelUpdate> currentUpdate;

  /** Each key's tree shape, saved with checkpoints and read back at a restore. */
  private transient TreeShapes shapes;

  private transient LoadedModels models;
  private transient TargetPool pool;
  private transient HeapIndexes indexes;
  private transient TargetIndexer indexer;
  private transient GradualReencode exactPass;
  private transient ModelUpdateApplier updates;
  private transient BatchAnswerer answerer;

  public ShardIndexFunction(ShardSettings settings, int[] shardKeys) {
    this.settings = settings;
    this.shardKeys = shardKeys;
  }

  @Override
  public void open(OpenContext context) {
    AvroTrust.install();
    models = new LoadedModels(settings);
    // Featurizing depends on the configuration only, not on a version's weights: any loaded
    // version's encoder does (there is one whenever a target is encoded or shipped).
    ShardTargets targets =
        new ShardTargets(
            getRuntimeContext().getMapState(ShardTargets.DESCRIPTOR),
            getRuntimeContext().getState(ShardTargets.BASES),
            t -> {
              Features f = models.newest().encoder.featurizeTarget(t.text);
              t.featureIds = f.ids();
              t.featureWeights = f.weights();
            });
    NamedPositives named =
        new NamedPositives(getRuntimeContext().getMapState(NamedPositives.DESCRIPTOR));
    currentUpdate = getRuntimeContext().getState(MODEL);
    ExactRefinement refinement =
        new ExactRefinement(getRuntimeContext().getState(ExactRefinement.DUE_BEFORE));
    if (shapes == null) { // a harness that initializes no state
      shapes = TreeShapes.none();
    }
    ShardMetrics metrics = new ShardMetrics(getRuntimeContext().getMetricGroup());
    pool = new TargetPool(settings, shardKeys.length, targets, named, metrics);
    indexes = new HeapIndexes(settings, targets, pool, shapes, metrics);
    indexer = new TargetIndexer(settings, targets, pool, metrics);
    exactPass = new GradualReencode(settings, targets, refinement, indexes);
    updates = new ModelUpdateApplier(settings, targets, models, indexes, pool, exactPass, metrics);
    answerer = new BatchAnswerer(settings, targets, pool, metrics);
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    shapes = TreeShapes.restore(context.getOperatorStateStore(), getRuntimeContext().getTaskInfo());
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    indexes.saveShapes(indexer.waiting());
  }

  @Override
  public void processElement1(ShardInput in, Context ctx, Collector<ShardReply> out)
      throws Exception {
    int key = ctx.getCurrentKey();
    ShardModel model = models.at(currentUpdate.value());
    ShardIndex index = index(key, model);
    switch (in.kind) {
      case ShardInput.UPSERT -> {
        indexer.upsert(
            key, index, model, in.targetId, in.text, ctx.timerService(), deadLetters(ctx));
        answerer.targetChanged(key, in.targetId);
      }
      case ShardInput.DELETE -> {
        indexer.delete(key, index, in.targetId, model.version);
        answerer.targetChanged(key, in.targetId);
      }
      case ShardInput.QUERIES -> answer(key, index, model, in.batch, ctx, out);
      default -> throw new IllegalStateException("unknown shard input kind " + in.kind);
    }
  }

  private void answer(
      int key,
      ShardIndex index,
      ShardModel model,
      QueryBatch batch,
      Context ctx,
      Collector<ShardReply> out)
      throws Exception {
    indexer.encodeWaiting(key, index, model, deadLetters(ctx));
    int shard = shardNumber(key);
    pool.admitPositives(key, shard, index, batch, model.version);
    out.collect(answerer.answer(key, shard, index, model, batch));
    // After the answer: the batch that first carries an update is not held for a group.
    exactPass.afterBatch(key, index, model);
  }

  @Override
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<ShardReply> out)
      throws Exception {
    ShardModel model = models.at(currentUpdate.value());
    int key = ctx.getCurrentKey();
    indexer.encodeWaiting(key, index(key, model), model, deadLetters(ctx));
  }

  /**
   * A model update, on its own input: an update is larger than a network buffer, and on the same
   * input as the backlog of query batches it would wait for buffers those batches hold.
   */
  @Override
  public void processElement2(ShardInput in, Context ctx, Collector<ShardReply> out)
      throws Exception {
    if (in.kind != ShardInput.MODEL_UPDATE) {
      throw new IllegalStateException("the model-updates input got shard input kind " + in.kind);
    }
    if (updates.apply(in.update, currentUpdate.value(), ctx.getCurrentKey(), deadLetters(ctx))) {
      currentUpdate.update(in.update);
    }
  }

  /** The current key's tree at {@code model}'s version, rebuilt from the key's state if missing. */
  private ShardIndex index(int key, ShardModel model) throws Exception {
    ShardIndex index = indexes.get(key);
    return index != null ? index : indexes.of(key, model.version, indexer.waitingOf(key));
  }

  private static Consumer<DeadLetter> deadLetters(Context ctx) {
    return letter -> ctx.output(DeadLetters.TAG, letter);
  }

  private int shardNumber(int key) {
    for (int s = 0; s < shardKeys.length; s++) {
      if (shardKeys[s] == key) {
        return s;
      }
    }
    throw new IllegalStateException("key " + key + " is no shard's key");
  }

  @Override
  public void close() {
    if (models != null) {
      models.close();
    }
    if (answerer != null) {
      answerer.close();
    }
  }
}
