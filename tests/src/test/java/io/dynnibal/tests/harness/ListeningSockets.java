package io.dynnibal.tests.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The TCP sockets a process listens on, read from Linux's {@code /proc}: the process's socket
 * inodes from {@code /proc/<pid>/fd}, their addresses from {@code /proc/net/tcp} and {@code tcp6}.
 * What a test checks with it: that nothing a local run starts answers beyond loopback.
 */
public final class ListeningSockets {
  private static final String LISTEN = "0A";

  private ListeningSockets() {}

  /** The addresses process {@code pid} listens on now. */
  public static Set<InetSocketAddress> of(long pid) {
    Set<String> inodes = socketInodes(pid);
    Set<InetSocketAddress> listening = new LinkedHashSet<>();
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      List<String> lines;
      try {
        lines = Files.readAllLines(Path.of(table));
      } catch (NoSuchFileException e) {
        continue;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      for (String line : lines.subList(1, lines.size())) {
        String[] f = line.trim().split("\\s+");
        if (f[3].equals(LISTEN) && inodes.contains(f[9])) {
          listening.add(address(f[1]));
        }
      }
    }
    return listening;
  }

  /** Those of {@code addresses} not on a loopback interface. */
  public static List<InetSocketAddress> beyondLoopback(Set<InetSocketAddress> addresses) {
    return addresses.stream().filter(a -> !a.getAddress().isLoopbackAddress()).toList();
  }

  /**
   * Samples {@link #of} every 50 ms on a thread of its own until {@link Watch#stop}: a run's
   * servers come and go while it runs.
   */
  public static Watch watch(long pid) {
    return new Watch(pid);
  }

  /** What a {@link #watch} saw. */
  public static final class Watch {
    private final Set<InetSocketAddress> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final Thread sampler;
    private volatile boolean running = true;

    private Watch(long pid) {
      sampler =
          new Thread(
              () -> {
                while (running) {
                  seen.addAll(of(pid));
                  try {
                    Thread.sleep(50);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "listening-sockets-" + pid);
      sampler.setDaemon(true);
      sampler.start();
    }

    /** Stops sampling; every address seen since the start. */
    public Set<InetSocketAddress> stop() throws InterruptedException {
      running = false;
      sampler.join();
      return new HashSet<>(seen);
    }
  }

  private static Set<String> socketInodes(long pid) {
    Set<String> inodes = new HashSet<>();
    try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
      for (Path fd : (Iterable<Path>) fds::iterator) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.startsWith("socket:[")) {
            inodes.add(target.substring(8, target.length() - 1));
          }
        } catch (IOException closedMeanwhile) {
          // the descriptor closed while the directory was read
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("the descriptors of process " + pid, e);
    }
    return inodes;
  }

  /**
   * {@code /proc/net/tcp*}'s {@code HEX-ADDRESS:HEX-PORT}: the address in 32-bit words of host
   * (little-endian) byte order, the port big-endian.
   */
  private static InetSocketAddress address(String field) {
    String[] parts = field.split(":");
    String hex = parts[0];
    byte[] bytes = new byte[hex.length() / 2];
    for (int word = 0; word < bytes.length / 4; word++) {
      for (int b = 0; b < 4; b++) {
        int at = word * 8 + (3 - b) * 2;
        bytes[word * 4 + b] = (byte) Integer.parseInt(hex.substring(at, at + 2), 16);
      }
    }
    try {
      return new InetSocketAddress(InetAddress.getByAddress(bytes), Integer.parseInt(parts[1], 16));
    } catch (java.net.UnknownHostException e) {
      throw new IllegalStateException(field, e);
    }
  }
}
