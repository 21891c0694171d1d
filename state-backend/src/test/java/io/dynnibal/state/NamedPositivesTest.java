package io.dynnibal.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class NamedPositivesTest {
  private final NamedPositives named = new NamedPositives(new HeapMapState<>(b -> b));

  @Test
  void eachIdIsNamedFirstOnceAndThenStaysNamed() throws Exception {
    assertEquals(List.of("a", "b"), named.name(List.of("a", "b", "a")));
    assertEquals(List.of("c"), named.name(List.of("b", "c")));
    assertTrue(named.contains("a"));
    assertFalse(named.contains("d"));
    assertEquals(Set.of("a", "b", "c"), named.all());
  }
}
