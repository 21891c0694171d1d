package io.dynnibal.gpukit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * The memory in use on GPU 0, read from {@code nvidia-smi} (the driver's count, every process's
 * allocations and contexts together) every {@code periodMillis} while a run goes on; the peak is
 * kept. Where {@code nvidia-smi} does not answer, {@link #peakMebibytes} is -1.
 */
final class GpuMemory implements AutoCloseable {
  private final Thread poller;
  private volatile long peak = -1;
  private volatile boolean running = true;

  GpuMemory(long periodMillis) {
    poller =
        new Thread(
            () -> {
              while (running) {
                long used = usedMebibytes();
                if (used > peak) {
                  peak = used;
                }
                try {
                  Thread.sleep(periodMillis);
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "gpu-memory");
    poller.setDaemon(true);
    poller.start();
  }

  long peakMebibytes() {
    return peak;
  }

  /** MiB in use on GPU 0 now, or -1. */
  static long usedMebibytes() {
    String out = nvidiaSmi("--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", "0");
    try {
      return out == null ? -1 : Long.parseLong(out.strip());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** GPU 0's name, or null. */
  static String name() {
    String out = nvidiaSmi("--query-gpu=name", "--format=csv,noheader", "-i", "0");
    return out == null ? null : out.strip();
  }

  private static String nvidiaSmi(String... args) {
    String[] command = new String[args.length + 1];
    command[0] = "nvidia-smi";
    System.arraycopy(args, 0, command, 1, args.length);
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0 ? out : null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  @Override
  public void close() {
    running = false;
    poller.interrupt();
  }
}
