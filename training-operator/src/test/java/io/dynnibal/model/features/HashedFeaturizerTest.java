package io.dynnibal.model.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class HashedFeaturizerTest {
  private final HashedFeaturizer featurizer = new HashedFeaturizer(FeatureConfig.DEFAULT);

  /**
   * A saved model's table rows are addressed by these buckets: the features of a text must stay the
   * same bits across versions of the featurizer (these were taken before its n-grams were hashed in
   * one pass per position), for a power-of-two bucket count and another.
   */
  @Test
  void theFeaturesOfAFixedTextNeverChange() {
    String text =
        "libmoosex-role-timer-perl - Moose role to time a method's runtime (Perl 5.36, python3.11)";
    Features byDefault = featurizer.featurize(text);
    assertEquals(151, byDefault.size());
    assertEquals(1375907819, java.util.Arrays.hashCode(byDefault.ids()));
    assertEquals(-1608187366, java.util.Arrays.hashCode(byDefault.weights()));
    Features other = new HashedFeaturizer(new FeatureConfig(1000, 64, 4, 2, 7)).featurize(text);
    assertEquals(122, other.size());
    assertEquals(-971895981, java.util.Arrays.hashCode(other.ids()));
    assertEquals(-152782878, java.util.Arrays.hashCode(other.weights()));
  }

  @Test
  void theSameTextAlwaysGivesTheSameFeatures() {
    String text = "libmoosex-role-timer-perl\nMoose role for timing methods";
    assertEquals(
        featurizer.featurize(text), new HashedFeaturizer(FeatureConfig.DEFAULT).featurize(text));
  }

  @Test
  void idsAreStrictlyIncreasingInRangeWithUnitNormWeights() {
    Random random = new Random(3);
    for (int trial = 0; trial < 200; trial++) {
      StringBuilder text = new StringBuilder();
      for (int w = 0; w < 1 + random.nextInt(60); w++) {
        text.append(randomWord(random)).append(random.nextInt(5) == 0 ? "-" : " ");
      }
      Features f = featurizer.featurize(text.toString());
      double norm = 0;
      for (int i = 0; i < f.size(); i++) {
        assertTrue(f.ids()[i] >= 0 && f.ids()[i] < FeatureConfig.DEFAULT.buckets());
        assertTrue(i == 0 || f.ids()[i] > f.ids()[i - 1], "ids not strictly increasing");
        norm += f.weights()[i] * f.weights()[i];
      }
      assertEquals(1.0, norm, 1e-5);
    }
  }

  @Test
  void aPackageNameSharesFeaturesWithTheWordsItIsMadeOf() {
    Set<Integer> name = ids(featurizer.featurize("libmoosex-role-timer-perl"));
    Set<Integer> words = ids(featurizer.featurize("moosex role timer"));
    Set<Integer> unrelated = ids(featurizer.featurize("gnome calculator desktop"));
    Set<Integer> shared = new HashSet<>(name);
    shared.retainAll(words);
    Set<Integer> sharedWithUnrelated = new HashSet<>(name);
    sharedWithUnrelated.retainAll(unrelated);
    // "role" and "timer" as words, n-grams of "moosex" inside "libmoosex"
    assertTrue(shared.size() >= 10, "only " + shared.size() + " shared features");
    assertTrue(
        sharedWithUnrelated.size() <= 1,
        sharedWithUnrelated.size() + " features shared with unrelated text");
  }

  @Test
  void theWholeCompoundTokenIsAFeatureOfItsOwn() {
    Set<Integer> compound = ids(featurizer.featurize("python3.11"));
    Set<Integer> split = ids(featurizer.featurize("python3 11"));
    assertTrue(
        compound.size() > 0 && !split.containsAll(compound),
        "the compound adds a feature the words lack");
  }

  @Test
  void caseAndSurroundingPunctuationDoNotMatter() {
    assertEquals(featurizer.featurize("Role Timer"), featurizer.featurize("role timer"));
    assertEquals(featurizer.featurize("(libfoo-dev),"), featurizer.featurize("libfoo-dev"));
  }

  @Test
  void aTextWithoutLettersOrDigitsHasNoFeatures() {
    assertSame(Features.EMPTY, featurizer.featurize(""));
    assertSame(Features.EMPTY, featurizer.featurize("  --- !!! \n"));
    assertThrows(IllegalArgumentException.class, () -> featurizer.featurize(null));
  }

  @Test
  void aHugeTextIsCutAtMaxWordsQuickly() {
    String word = "packaging ";
    String huge = word.repeat(100_000) + "tail";
    long start = System.nanoTime();
    Features f = featurizer.featurize(huge);
    double millis = (System.nanoTime() - start) / 1e6;
    assertTrue(f.size() < 40, f.size() + " features from one repeated word");
    assertEquals(featurizer.featurize(word.repeat(FeatureConfig.DEFAULT.maxWords())), f);
    assertTrue(millis < 5_000, "took " + millis + " ms");
  }

  @Test
  void differentBucketCountsGiveDifferentButValidIds() {
    HashedFeaturizer small = new HashedFeaturizer(new FeatureConfig(64, 16, 4, 3, 4));
    Features f =
        small.featurize("a fairly long sentence about debian packages and their descriptions");
    for (int id : f.ids()) {
      assertTrue(id >= 0 && id < 64);
    }
    assertNotEquals(featurizer.featurize("debian"), small.featurize("debian"));
  }

  @Test
  void badConfigIsRefusedWithTheReason() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> new FeatureConfig(1 << 10, 8, 9, 3, 5));
    assertTrue(e.getMessage().contains("charNgramWords"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> new FeatureConfig(8, 8, 4, 3, 5));
    assertThrows(IllegalArgumentException.class, () -> new FeatureConfig(1 << 10, 8, 4, 5, 3));
  }

  private static Set<Integer> ids(Features f) {
    Set<Integer> ids = new HashSet<>();
    for (int id : f.ids()) {
      ids.add(id);
    }
    return ids;
  }

  private static String randomWord(Random random) {
    StringBuilder w = new StringBuilder();
    for (int i = 0; i < 2 + random.nextInt(9); i++) {
      w.append((char) ('a' + random.nextInt(26)));
    }
    return w.toString();
  }
}
