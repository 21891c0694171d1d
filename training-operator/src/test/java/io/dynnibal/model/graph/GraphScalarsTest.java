package io.dynnibal.model.graph;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.training.GradientCollector;
import io.dynnibal.model.TorchRuntime;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The constant of each operation must still hold its value when the backward pass reads it, after a
 * garbage collection has run between the forward and the backward pass (as one may in any training
 * step; the longer the step, the likelier).
 *
 * <p>With DJL's own {@code x.mul(20f)} in place of {@link GraphScalars#times}, this test's setup
 * gives a wrong gradient (NaN, or the allocator's free-list pointer read as the freed float).
 */
class GraphScalarsTest {
  private static NDManager manager;

  @BeforeAll
  static void start() {
    manager = TorchRuntime.engine().newBaseManager();
  }

  @AfterAll
  static void stop() {
    manager.close();
  }

  @Test
  void timesKeepsItsFactorForTheBackwardPass() throws InterruptedException {
    assertGradient(x -> GraphScalars.times(x, 20f), new float[] {20f, 20f, 20f});
  }

  @Test
  void dividedByKeepsItsDivisorForTheBackwardPass() throws InterruptedException {
    assertGradient(x -> GraphScalars.dividedBy(x, 8f), new float[] {0.125f, 0.125f, 0.125f});
  }

  @Test
  void atLeastKeepsItsFloorForTheBackwardPass() throws InterruptedException {
    // x = {1, 2, 3}: the floor 2.5 takes the first two elements, the third passes its gradient.
    assertGradient(x -> GraphScalars.atLeast(x, 2.5f), new float[] {0f, 0f, 1f});
  }

  private static void assertGradient(UnaryOperator<NDArray> op, float[] expected)
      throws InterruptedException {
    for (int trial = 0; trial < 5; trial++) {
      try (NDManager scope = manager.newSubManager();
          GradientCollector collector = manager.getEngine().newGradientCollector()) {
        NDArray x = scope.create(new float[] {1f, 2f, 3f});
        x.setRequiresGradient(true);
        NDArray y = op.apply(x).sum();
        freeUnreachableDirectBuffersAndReuseTheirMemory();
        collector.backward(y);
        assertArrayEquals(expected, x.getGradient().toFloatArray(), "trial " + trial);
      }
    }
  }

  /**
   * A collection frees direct buffers nothing references (their cleaner runs shortly after), and
   * new 4-byte buffers holding NaN then take the freed memory.
   */
  private static void freeUnreachableDirectBuffersAndReuseTheirMemory()
      throws InterruptedException {
    System.gc();
    Thread.sleep(100);
    List<ByteBuffer> reuse = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      ByteBuffer b = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder());
      b.putFloat(0, Float.NaN);
      reuse.add(b);
    }
  }
}
