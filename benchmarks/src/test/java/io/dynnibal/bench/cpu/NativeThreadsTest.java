package io.dynnibal.bench.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class NativeThreadsTest {

  @Test
  void threadsAreKnownByTheirLinuxNames() {
    assertEquals(NativeThreads.JIT, NativeThreads.kind("C2 CompilerThre"));
    assertEquals(NativeThreads.JIT, NativeThreads.kind("C1 CompilerThre"));
    assertEquals(NativeThreads.GC, NativeThreads.kind("GC Thread#1"));
    assertEquals(NativeThreads.GC, NativeThreads.kind("VM Thread"));
    assertEquals(NativeThreads.ROCKSDB, NativeThreads.kind("rocksdb:low"));
    assertNull(NativeThreads.kind("shard-index (1/"));
  }

  /** A name may hold parentheses: the fields after it are counted from the last one. */
  @Test
  void aStatLineGivesUserPlusSystemTime() {
    String stat = "4711 (trainer (1/1)#0) S 1 2 3 0 -1 4194368 5 0 0 0 250 17 0 0 20 0 1 0 99 0 0";
    assertEquals((250 + 17) * 10_000_000L, NativeThreads.cpuNanos(stat));
  }

  /** The compilers of this very JVM have compiled something by the time the test runs. */
  @Test
  void theCompilersOfThisJvmHaveUsedCpu() {
    NativeThreads threads = NativeThreads.open();
    assumeTrue(threads != null, "no /proc/self/task on this system");
    Map<String, Long> cpu = threads.sample();
    assertTrue(cpu.getOrDefault(NativeThreads.JIT, 0L) > 0, cpu.toString());
    Map<String, Long> again = threads.sample();
    assertTrue(again.get(NativeThreads.JIT) >= cpu.get(NativeThreads.JIT), again.toString());
  }
}
