package io.dynnibal.bench.state;

import io.dynnibal.bench.Stages;
import io.dynnibal.index.ClusteredVectors;
import io.dynnibal.state.ShardIndex;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The heap one shard's index takes per target, alone in a JVM: {@code bench scale}'s heap figure
 * holds the whole job's (broker, sources, buffers) and moves by ~100 bytes per target between runs
 * of the same build; this one measures only a {@link ShardIndex} (its SG tree, vectors and ids).
 * Targets are inserted one by one, as a shard indexes them; their ids are made per insert (as a
 * shard reads them from a record) so what the index keeps of them is counted, and the input vectors
 * stay alive throughout so they are not.
 */
public final class ShardHeapBenchmark {
  private ShardHeapBenchmark() {}

  public record Config(int targets, int dim, long seed) {}

  /**
   * Runs the benchmark and returns its figures (progress null: quietly), showing each stage on
   * {@code progress}.
   */
  public static Map<String, Object> run(Config config, PrintStream progress)
      throws InterruptedException {
    Stages stages = new Stages(progress, "shard-heap", 3);
    stages.next(String.format("%,d clustered vectors, the heap before", config.targets()));
    float[][] vectors = ClusteredVectors.generate(config.targets(), config.dim(), config.seed());
    ShardIndex index = ShardIndex.empty(config.dim(), 1.3);
    long before = heapAfterGc();
    stages.next(String.format("inserting %,d targets one by one", vectors.length));
    long start = System.nanoTime();
    for (int i = 0; i < vectors.length; i++) {
      index.upsert(id(i), vectors[i]);
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    stages.next("the heap after");
    long after = heapAfterGc();
    if (vectors[vectors.length - 1] == null) {
      throw new AssertionError(); // reads the vectors after the measurement: they stay alive to it
    }
    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("targets", config.targets());
    figures.put("dim", config.dim());
    figures.put("vectors", "ClusteredVectors, seed " + config.seed());
    figures.put("id_example", id(0));
    figures.put("indexed", index.size());
    figures.put("insert_seconds", seconds);
    figures.put("insert_targets_per_s", config.targets() / seconds);
    figures.put("heap_bytes", after - before);
    figures.put("heap_bytes_per_target", (after - before) / (double) config.targets());
    return figures;
  }

  /** Ids shaped like a package name, made anew each time. */
  private static String id(int i) {
    return String.format("pkg-%07d", i);
  }

  /** The heap in use after a few full collections: what a heap-per-target figure subtracts. */
  public static long heapAfterGc() throws InterruptedException {
    var memory = ManagementFactory.getMemoryMXBean();
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(300);
    }
    return memory.getHeapMemoryUsage().getUsed();
  }
}
