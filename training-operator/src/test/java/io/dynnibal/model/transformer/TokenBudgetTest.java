package io.dynnibal.model.transformer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.dynnibal.model.DualEncoder;
import io.dynnibal.model.DualEncoderConfig;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class TokenBudgetTest {
  private static WordPieceTokenizer tokenizer() throws IOException {
    String vocab =
        String.join("\n", "[PAD]", "[UNK]", "[CLS]", "[SEP]", "cat", "sat", "mat", "##s");
    return WordPieceTokenizer.fromVocabTxt(
        new ByteArrayInputStream(vocab.getBytes(StandardCharsets.UTF_8)), true);
  }

  @Test
  void countsWordPiecesAndTheTextsTheBudgetCuts() throws IOException {
    // Word pieces, by hand: 1, 2 ("cat" "##s"), 3, 4, 6 ("cats" is two, an unknown word one).
    List<String> texts = List.of("cat", "cats", "cat sat mat", "Cats sat mat", "cats cats dog mat");
    TokenBudget budget = TokenBudget.measure(tokenizer(), texts, 5); // three word pieces

    assertEquals(5, budget.texts());
    assertEquals(3, budget.medianPieces()); // sorted 1 2 3 4 6: the third
    assertEquals(6, budget.p90Pieces()); // rank ceil(4.5) = 5
    assertEquals(2 / 5.0, budget.cutShare(), 1e-12); // 4 and 6 are over 3
    assertEquals(
        "5 targets: 3 word pieces at the median, 6 at the 90th percentile; 40.0 % cut at 5 tokens",
        budget.describe("targets"));
  }

  @Test
  void aBudgetThatHoldsEveryTextCutsNone() throws IOException {
    TokenBudget budget = TokenBudget.measure(tokenizer(), List.of("cat sat", "mat"), 4);

    assertEquals(0.0, budget.cutShare());
  }

  @Test
  void refusesABudgetWithoutRoomForTheMarkers() {
    assertThrows(
        IllegalArgumentException.class, () -> TokenBudget.measure(tokenizer(), List.of("cat"), 1));
  }

  @Test
  void aTransformerDescribesItsTargetAndQueryBudgetsAndTheBagTowerNone() {
    List<String> texts =
        List.of("the cat sat on the mat"); // six word pieces in MiniLM's vocabulary
    DualEncoderConfig transformer =
        DualEncoderConfig.transformer(BertCheckpoint.MINILM, 0, 8, 4, 0, true, 20f);
    try (DualEncoder encoder = DualEncoder.create(transformer, 1)) {
      assertEquals(
          List.of(
              "1 targets: 6 word pieces at the median, 6 at the 90th percentile; 0.0 % cut at 8 tokens",
              "1 queries: 6 word pieces at the median, 6 at the 90th percentile; 100.0 % cut at 4"
                  + " tokens"),
          encoder.describeTokenBudgets(texts, texts));
    }
    try (DualEncoder bag = DualEncoder.create(DualEncoderConfig.DEFAULT, 1)) {
      assertEquals(List.of(), bag.describeTokenBudgets(texts, texts));
    }
  }
}
