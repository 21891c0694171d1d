package io.dynnibal.negatives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class UnnamedShareTest {
  private static final List<String> IDS =
      IntStream.range(0, 20_000).mapToObj(i -> "pkg-" + i).toList();

  private static long admitted(UnnamedShare share, long version) {
    return IDS.stream().filter(id -> share.admits(id, version)).count();
  }

  @Test
  void admitsTheShareOfTheTargetsAtEachVersion() {
    UnnamedShare share = new UnnamedShare(0.1, 42);
    // Binomial(20,000, 0.1): sd 42; four sd either side.
    for (long version = 0; version < 5; version++) {
      long n = admitted(share, version);
      assertTrue(Math.abs(n - 2_000) < 170, "version " + version + " admitted " + n);
    }
  }

  @Test
  void eachVersionDrawsAnewIndependentlyOfTheLast() {
    UnnamedShare share = new UnnamedShare(0.3, 42);
    long both = IDS.stream().filter(id -> share.admits(id, 7) && share.admits(id, 8)).count();
    // Independent draws share 0.09 of the ids (sd 40); the same draw would share 0.3.
    assertTrue(Math.abs(both - 1_800) < 170, "admitted at both versions: " + both);
  }

  @Test
  void theSameSeedAdmitsTheSameTargetsAnotherSeedOthers() {
    UnnamedShare a = new UnnamedShare(0.5, 42);
    UnnamedShare again = new UnnamedShare(0.5, 42);
    UnnamedShare other = new UnnamedShare(0.5, 43);
    assertTrue(IDS.stream().allMatch(id -> a.admits(id, 3) == again.admits(id, 3)));
    long agree = IDS.stream().filter(id -> a.admits(id, 3) == other.admits(id, 3)).count();
    assertTrue(Math.abs(agree - 10_000) < 300, "two seeds agree on " + agree);
  }

  @Test
  void zeroAdmitsNoneAndOneAdmitsAll() {
    assertEquals(0, admitted(new UnnamedShare(0, 1), 4));
    assertEquals(IDS.size(), admitted(new UnnamedShare(1, 1), 4));
    assertFalse(new UnnamedShare(0, 1).admits("x", 0));
  }

  @Test
  void aShareOutsideTheUnitIntervalIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new UnnamedShare(-0.1, 1));
    assertThrows(IllegalArgumentException.class, () -> new UnnamedShare(1.5, 1));
    assertThrows(IllegalArgumentException.class, () -> new UnnamedShare(Double.NaN, 1));
  }
}
