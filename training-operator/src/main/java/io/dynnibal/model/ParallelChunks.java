package io.dynnibal.model;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs {@code [0, size)} in chunks of {@code chunkSize} on up to {@code threads} threads, each
 * taking the next chunk when it is done with one, with autograd off on each (inference). One thread
 * runs on the caller's.
 */
final class ParallelChunks {
  private ParallelChunks() {}

  /** The work of one chunk, positions {@code [from, to)}. */
  interface Chunk {
    void run(int from, int to);
  }

  static void run(int size, int chunkSize, int threads, Chunk chunk) {
    int chunks = (size + chunkSize - 1) / chunkSize;
    AtomicInteger next = new AtomicInteger();
    Runnable worker =
        () -> {
          TorchRuntime.noGradOnThisThread();
          for (int c = next.getAndIncrement(); c < chunks; c = next.getAndIncrement()) {
            chunk.run(c * chunkSize, Math.min(size, (c + 1) * chunkSize));
          }
        };
    int workers = Math.min(threads, chunks);
    if (workers <= 1) {
      worker.run();
      return;
    }
    ExecutorService pool =
        Executors.newFixedThreadPool(
            workers,
            r -> {
              Thread t = new Thread(r, "tower-encode");
              t.setDaemon(true);
              return t;
            });
    try {
      List<Future<?>> running = new ArrayList<>();
      for (int w = 0; w < workers; w++) {
        running.add(pool.submit(worker));
      }
      for (Future<?> f : running) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while encoding", e);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException r
          ? r
          : new IllegalStateException("encoding failed", e.getCause());
    } finally {
      pool.shutdownNow();
    }
  }
}
