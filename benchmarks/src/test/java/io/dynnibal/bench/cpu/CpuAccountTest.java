package io.dynnibal.bench.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CpuAccountTest {

  @Test
  void aFlinkTaskThreadCountsForItsOperator() {
    assertEquals("shard-index", CpuAccount.group("shard-index (1/2)#0"));
    assertEquals("trainer", CpuAccount.group("trainer (1/1)#3"));
    assertEquals("GC Thread#N", CpuAccount.group("GC Thread#12"));
  }

  /** A thread that computes is counted for its group, one that sleeps for nothing. */
  @Test
  void theCpuOfAWindowGoesToTheThreadsThatUsedIt() throws Exception {
    CpuAccount account = CpuAccount.start(20);
    assertNotNull(account, "this JVM measures threads' CPU time");
    try (account) {
      long from = System.currentTimeMillis();
      Thread busy = new Thread(CpuAccountTest::spin, "shard-index (1/1)#0");
      Thread idle = new Thread(CpuAccountTest::sleep, "trainer (1/1)#0");
      busy.start();
      idle.start();
      busy.join();
      idle.join();
      Thread.sleep(60);
      long to = System.currentTimeMillis();
      CpuAccount.Split split =
          account.between(
              from, to, Map.of("shards", List.of("shard-index"), "trainer", List.of("trainer")));
      assertNotNull(split);
      double shards = split.groupCores().get("shards");
      double trainer = split.groupCores().get("trainer");
      assertTrue(shards > 0.05, "the spinning thread's share: " + split);
      assertTrue(trainer < shards / 10, "the sleeping thread's share: " + split);
      assertTrue(split.groupCores().get("other") >= 0, split.toString());
      if (NativeThreads.open() != null) {
        assertEquals(NativeThreads.KINDS, List.copyOf(split.nativeCores().keySet()));
        assertEquals(split.nativeCores().get(NativeThreads.JIT), split.compileCores());
      }
      assertNull(account.between(to + 60_000, to + 120_000, Map.of()), "no samples: no split");
    }
  }

  private static void spin() {
    long end = System.nanoTime() + 400_000_000L;
    double x = 0;
    while (System.nanoTime() < end) {
      x += Math.sqrt(x + 1);
    }
    if (x < 0) {
      throw new AssertionError();
    }
  }

  private static void sleep() {
    try {
      Thread.sleep(400);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
