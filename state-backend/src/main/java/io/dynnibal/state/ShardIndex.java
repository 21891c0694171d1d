package io.dynnibal.state;

import io.dynnibal.index.nystrom.CacheMap;
import io.dynnibal.index.sampling.NegativeSampler;
import io.dynnibal.index.sampling.Samples;
import io.dynnibal.index.sgtree.SgNode;
import io.dynnibal.index.sgtree.SgTree;
import io.dynnibal.index.sgtree.SgTreeShape;
import io.dynnibal.index.sgtree.TreeRepair;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;

/**
 * The heap side of one shard: its SG tree over cached vectors, with target ids mapped to the tree's
 * int slots and a dense list of live slots for uniform draws. It is a cache of the shard's RocksDB
 * state ({@link ShardTargets}: every target's text and cache vector) and is rebuilt from it after a
 * restore.
 *
 * <p>Invariant: the tree holds exactly the live slots of {@code ids}, and their vectors mapped by
 * the {@link TreeFrame} equal the state's at the current version (the stored vectors moved by their
 * bases' maps), up to the tree's 8 bits per coordinate ({@link io.dynnibal.index.Int8Quantizer}:
 * each coordinate within 1/127 of the vector's largest when it was snapped, plus what later maps
 * made of that error) and float rounding. The one exception is a target {@link #stage}d by a
 * gradual exact pass: the state holds its exact vector, the index holds that vector aside, and the
 * tree keeps the map's approximation until {@link #rebuilt} builds a tree from the staged vectors.
 */
public final class ShardIndex {
  private final SgTree tree;

  /** Current vectors are {@code frame} applied to the tree's: model updates move the frame. */
  private TreeFrame frame;

  private long framesFlattened;
  private long changes;

  /**
   * Exact current vectors waiting for {@link #rebuilt}, by id; each target's tree vector is still
   * the approximation it had. Heap only: a restore builds its tree from the state, which holds
   * them.
   */
  private final Map<String, float[]> staged = new HashMap<>();

  private final TargetIds ids;

  /** The live slots of {@code ids}, for uniform draws. */
  private final LiveSlots live;

  private ShardIndex(SgTree tree) {
    this(tree, new TargetIds());
  }

  /** An index of {@code tree} whose slots are {@code ids}', all live. */
  private ShardIndex(SgTree tree, TargetIds ids) {
    this.tree = tree;
    this.frame = TreeFrame.identity(tree.dimension());
    this.ids = ids;
    this.live = new LiveSlots(ids.slots());
  }

  public static ShardIndex empty(int dimension, double base) {
    return new ShardIndex(new SgTree(dimension, base));
  }

  /**
   * Bulk-builds the tree (after an exact re-encode, or a restore without a usable shape: see {@link
   * #restore}): on clustered data such as trained encodings a bulk build is much cheaper than
   * inserting the targets one by one ({@link SgTree#build}).
   */
  public static ShardIndex build(
      int dimension, double base, List<String> ids, List<float[]> vectors, long seed) {
    int[] slots = new int[ids.size()];
    Arrays.setAll(slots, i -> i);
    SgTree tree =
        ids.isEmpty()
            ? new SgTree(dimension, base)
            : SgTree.build(dimension, base, slots, vectors.toArray(new float[0][]), seed);
    ShardIndex index = new ShardIndex(tree);
    for (String id : ids) {
      index.register(id);
    }
    return index;
  }

  /**
   * The tree's shape with the ids of its slots ({@link SgTreeShape}): what {@link #restore} needs
   * besides the state's vectors to skip the bulk build.
   *
   * @param withoutVector targets the state will give back without a vector (stored again, not
   *     encoded yet): their nodes' vectors are written, so that such a node stays in place, hollow
   */
  public byte[] shape(Predicate<String> withoutVector) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(ids.slots() * 16 + 16);
    ids.writeAll(out);
    byte[] tree =
        SgTreeShape.write(this.tree, frame::toCurrent, slot -> withoutVector.test(ids.idOf(slot)));
    out.write(tree, 0, tree.length);
    return out.toByteArray();
  }

  /**
   * The index of {@code ids} at {@code vectors} (the state's, at the current version), its tree
   * rebuilt from a {@link #shape} written before (a checkpoint's) instead of in bulk: targets keep
   * their nodes where the shape has them, the tree is repaired on these vectors ({@link
   * SgTreeShape#read}), and targets the shape does not know are inserted. As sound as {@link
   * #build}'s whatever the shape's age.
   *
   * @throws IllegalArgumentException if the shape is malformed
   */
  public static Restored restore(
      int dimension,
      double base,
      List<String> ids,
      List<float[]> vectors,
      long seed,
      byte[] shape) {
    TargetIds slots = new TargetIds();
    for (String id : ids) {
      slots.add(id); // slot i is ids.get(i), as in build
    }
    ByteBuffer in = ByteBuffer.wrap(shape);
    int[] slotOf = TargetIds.readSlotMap(in, shape, slots);
    SgTreeShape.Restored restored =
        SgTreeShape.read(
            in, // the tree's shape follows the ids
            dimension,
            base,
            old -> old >= 0 && old < slotOf.length ? slotOf[old] : -1,
            vectors.toArray(new float[0][]),
            seed);
    ShardIndex rebuilt = new ShardIndex(restored.tree(), slots);
    return new Restored(rebuilt, restored.placed(), restored.inserted(), restored.repair());
  }

  /**
   * An index {@link #restore}d from a shape: targets placed where the shape had them, targets
   * inserted after, the repair of the placed ones.
   */
  public record Restored(ShardIndex index, int placed, int inserted, TreeRepair.Report repair) {}

  public int size() {
    return live.count();
  }

  /**
   * Upserts, deletes and moves since the index was made: two {@link #shape}s written at one count
   * (with the same targets without a vector) are the same.
   */
  public long changes() {
    return changes;
  }

  public boolean contains(String id) {
    return ids.slotOf(id) >= 0;
  }

  /** Adds or replaces a target, given its current vector (one staged before is dropped). */
  public void upsert(String id, float[] vector) {
    changes++;
    staged.remove(id);
    int existing = ids.slotOf(id);
    if (existing >= 0) {
      tree.delete(existing); // same slot, new vector: a target updated many times holds one slot
      tree.insert(existing, inTree(vector));
      return;
    }
    float[] x = inTree(vector);
    tree.insert(register(id), x);
  }

  /** {@code vector} in the tree's coordinates; a frame that does not reach it is flattened. */
  private float[] inTree(float[] vector) {
    float[] x = frame.toTree(vector);
    if (x == null) {
      flatten(live.count());
      x = vector.clone();
    }
    return x;
  }

  public boolean delete(String id) {
    int slot = ids.remove(id);
    if (slot < 0) {
      return false;
    }
    changes++;
    staged.remove(id);
    tree.delete(slot);
    live.remove(slot);
    return true;
  }

  /** A target drawn uniformly from this shard. */
  public String uniform(RandomGenerator random) {
    if (live.count() == 0) {
      throw new IllegalStateException("the shard is empty");
    }
    return ids.idOf(live.get(random.nextInt(live.count())));
  }

  /** Negatives for one query (cache-space vector), as ids with their logits. */
  public Samples sample(NegativeSampler sampler, float[] query, int count, RandomGenerator random) {
    return prepareAll(sampler, new float[][] {query})[0].sample(count, random);
  }

  /**
   * Each query's sampler over this shard, for several rounds of draws: the tree is clustered for a
   * query once, and scored for all of them together where the sampler can ({@link
   * NegativeSampler#prepareAll}). Valid until the index changes.
   */
  public NegativeSampler.Prepared[] prepareAll(NegativeSampler sampler, float[][] queries) {
    float[][] inTree = new float[queries.length][];
    float[][] positions = new float[queries.length][];
    for (int q = 0; q < queries.length; q++) {
      inTree[q] = frame.queryInTree(queries[q]);
      positions[q] = frame.positionInTree(queries[q]);
    }
    return sampler.prepareAll(tree, inTree, positions);
  }

  /**
   * How many ids have joined this index since it was built (each first insert of an id; a slot is
   * never reused), so a holder of a copy of its members can take just the newcomers ({@link
   * #idsJoinedSince}).
   */
  public int joined() {
    return ids.slots();
  }

  /** The live ids among those that joined after the first {@code joined} ({@link #joined}). */
  public List<String> idsJoinedSince(int joined) {
    List<String> out = new ArrayList<>();
    for (int slot = joined; slot < ids.slots(); slot++) {
      String id = ids.idOf(slot);
      if (id != null) {
        out.add(id);
      }
    }
    return out;
  }

  /** The live targets' ids, in slot order. */
  public List<String> ids() {
    List<String> out = new ArrayList<>(live.count());
    for (int slot = 0; slot < ids.slots(); slot++) {
      String id = ids.idOf(slot);
      if (id != null) {
        out.add(id);
      }
    }
    return out;
  }

  /**
   * The target's current vector as the index holds it (a copy; 8 bits per coordinate, see the class
   * invariant), or null if it is not indexed.
   */
  public float[] vectorOf(String id) {
    int slot = ids.slotOf(id);
    return slot < 0 ? null : frame.toCurrent(tree.nodeOf(slot).vector());
  }

  public String idOf(int slot) {
    return ids.idOf(slot);
  }

  /**
   * How a model update moved the index: by its frame alone ({@code repair} null), or by moving
   * every vector and repairing the tree.
   *
   * @param distortion the composed frame's distortion of the tree's edges, which decided it
   */
  public record Moved(double distortion, TreeRepair.Report repair) {
    public boolean byFrame() {
      return repair == null;
    }
  }

  /** Tree edges (a node's vector minus its parent's) the frame's distortion is measured on. */
  static final int DISTORTION_EDGES = 512;

  /**
   * Applies a model update's map. Composed into the tree's frame while the frame distorts the
   * tree's edges by at most {@link TreeFrame#MAX_DISTORTION}: no vector moves and the tree is
   * untouched, so the update costs a few d' x d' products. Otherwise the whole frame is applied to
   * every vector in the tree, and only what the drift can have broken is repaired.
   */
  public Moved move(CacheMap map, long seed) {
    changes++;
    float[] scratch = new float[map.dimension()];
    for (float[] v : staged.values()) {
      map.applyInPlace(v, scratch); // staged vectors are current ones: the map moves them too
    }
    frame = frame.then(map);
    double distortion = frame.distortion(edges());
    if (distortion <= TreeFrame.MAX_DISTORTION) {
      return new Moved(distortion, null);
    }
    return new Moved(distortion, flatten(seed));
  }

  /** Moves every tree vector to current coordinates and repairs the tree: the identity frame. */
  private TreeRepair.Report flatten(long seed) {
    framesFlattened++;
    CacheMap applied = frame.asMap();
    float[] scratch = new float[applied.dimension()];
    double drift = tree.moveVectors(v -> applied.applyInPlace(v, scratch));
    frame = TreeFrame.identity(tree.dimension());
    return TreeRepair.repair(tree, drift, TreeRepair.Mode.BOUNDED, seed);
  }

  /**
   * Holds {@code vector} as the indexed target {@code id}'s current vector without touching the
   * tree, which keeps serving the vector it had until {@link #rebuilt}. A gradual exact pass
   * re-encodes a part of the targets per batch while the tree serves the update's map: an {@link
   * #upsert} of each exact vector would cost a delete and an insert, and when the map is singular
   * the first vector beyond the frame's reach would flatten the frame and repair the whole tree. A
   * later {@link #upsert} or {@link #delete} of the target drops what is staged for it; a {@link
   * #move} moves it by its map.
   *
   * @throws IllegalArgumentException if the target is not indexed
   */
  public void stage(String id, float[] vector) {
    if (!contains(id)) {
      throw new IllegalArgumentException("cannot stage a vector for " + id + ": it is not indexed");
    }
    staged.put(id, vector.clone());
  }

  /** How many targets have a {@link #stage}d vector. */
  public int stagedCount() {
    return staged.size();
  }

  /**
   * A new index of the same targets, its tree built in bulk ({@link #build}) from the staged
   * vectors and, for the targets without one, their current vectors as this index holds them.
   */
  public ShardIndex rebuilt(long seed) {
    List<String> all = ids();
    List<float[]> vectors = new ArrayList<>(all.size());
    for (String id : all) {
      float[] v = staged.get(id);
      vectors.add(v != null ? v : vectorOf(id));
    }
    return build(tree.dimension(), tree.base(), all, vectors, seed);
  }

  /** Up to {@link #DISTORTION_EDGES} node-to-parent differences, spread over the live targets. */
  private List<float[]> edges() {
    List<float[]> edges = new ArrayList<>();
    int stride = Math.max(1, live.count() / DISTORTION_EDGES);
    for (int i = 0; i < live.count() && edges.size() < DISTORTION_EDGES; i += stride) {
      SgNode node = tree.nodeOf(live.get(i));
      if (node.parent() == null) {
        continue;
      }
      float[] v = node.vector();
      float[] p = node.parent().vector();
      float[] e = new float[v.length];
      for (int j = 0; j < v.length; j++) {
        e[j] = v[j] - p[j];
      }
      edges.add(e);
    }
    return edges;
  }

  /**
   * How often a frame was applied to the tree's vectors (past its distortion bound, or for a vector
   * beyond its reach).
   */
  public long framesFlattened() {
    return framesFlattened;
  }

  /** The coordinates of the tree's vectors. */
  public TreeFrame frame() {
    return frame;
  }

  public List<String> checkInvariants() {
    return tree.checkInvariants();
  }

  private int register(String id) {
    int slot = ids.add(id);
    live.add(slot);
    return slot;
  }
}
