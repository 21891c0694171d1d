package io.dynnibal.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import java.util.List;
import org.junit.jupiter.api.Test;

class Bm25BaselineTest {
  private static final List<TargetText> TARGETS =
      List.of(
          new TargetText("zsh", "zsh\nshell with lots of features"),
          new TargetText("bash", "bash\nGNU Bourne Again SHell"),
          new TargetText("fish", "fish\nfriendly interactive shell"),
          new TargetText("0ad", "0ad\nreal-time strategy game of ancient warfare"),
          new TargetText("gimp", "gimp\nGNU Image Manipulation Program"));

  @Test
  void rareWordsOutweighCommonOnesAndCaseDoesNotMatter() {
    try (Bm25Baseline bm25 = Bm25Baseline.of(TARGETS)) {
      assertEquals("fish", bm25.search("FRIENDLY shell", 1).get(0));
      assertEquals("0ad", bm25.search("a strategy game", 5).get(0));
      assertEquals(List.of(), bm25.search("nothing matches", 5));
      // "gnu" is in two targets, "image" in one: the rarer word decides.
      assertEquals("gimp", bm25.search("gnu image", 2).get(0));
    }
  }

  @Test
  void evaluationCountsRanksAndUnknownTargets() {
    List<LabelledQuery> queries =
        List.of(
            new LabelledQuery("q1", "interactive shell", "fish"),
            new LabelledQuery("q2", "bourne again", "bash"),
            new LabelledQuery("q3", "warfare", "missing"),
            new LabelledQuery("q4", "no such words", "gimp"));
    RetrievalMetrics m = Bm25Baseline.evaluate(TARGETS, queries);
    assertEquals(4, m.queries());
    assertEquals(1, m.unknownTargets());
    assertEquals(0.5, m.recallAt(1), 1e-9);
    assertEquals(0.5, m.recallAt(100), 1e-9);
  }
}
