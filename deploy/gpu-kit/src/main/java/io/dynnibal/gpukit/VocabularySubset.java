package io.dynnibal.gpukit;

import io.dynnibal.model.transformer.BertCheckpoint;
import io.dynnibal.model.transformer.BertShape;
import io.dynnibal.model.transformer.WordPieceTokenizer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * A checkpoint cut down to the word pieces some texts use: the same network, with only those rows
 * of the word-embedding matrix (in their original order) and a vocabulary of those tokens and the
 * special ones. On those texts it is the same model: WordPiece takes the longest piece of the
 * vocabulary at each position, and every piece it took from the full vocabulary is kept while no
 * longer one is added, so each text splits into the same pieces, now numbered by their rank among
 * the kept ones. {@link #of} checks that on every text before it returns.
 *
 * <p>The embedding matrix is most of a small encoder's weights (all-MiniLM-L6-v2's is 30,522 x 384
 * of its 22.7 M parameters), so this is how a model for a few thousand texts travels in a few tens
 * of MiB.
 */
final class VocabularySubset {
  private static final String WORDS = "embeddings.word_embeddings.weight";
  private static final List<String> SPECIAL = List.of("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]");

  /** Long enough that no text of a corpus is cut: the subset must hold every piece it could use. */
  private static final int WHOLE_TEXT = 1 << 20;

  private VocabularySubset() {}

  /**
   * @throws IllegalStateException if some text does not split into the same pieces under the kept
   *     vocabulary (it cannot, by the argument above; the check guards the tokenizer's changes)
   */
  static BertCheckpoint of(BertCheckpoint full, Collection<String> texts) {
    WordPieceTokenizer tokenizer = full.tokenizer();
    List<String> tokens = tokenizer.tokensById();
    TreeSet<Integer> kept = new TreeSet<>();
    for (String special : SPECIAL) {
      int id = tokens.indexOf(special);
      if (id >= 0) {
        kept.add(id);
      }
    }
    for (String text : texts) {
      for (int id : tokenizer.encode(text, WHOLE_TEXT)) {
        kept.add(id);
      }
    }
    int[] newId = new int[tokens.size()];
    Arrays.fill(newId, -1);
    List<String> vocabulary = new ArrayList<>(kept.size());
    BertCheckpoint.Tensor words = full.weight(WORDS);
    int hidden = (int) words.shape()[1];
    float[] rows = new float[kept.size() * hidden];
    for (int old : kept) {
      newId[old] = vocabulary.size();
      System.arraycopy(words.values(), old * hidden, rows, vocabulary.size() * hidden, hidden);
      vocabulary.add(tokens.get(old));
    }
    Map<String, BertCheckpoint.Tensor> weights = new LinkedHashMap<>(full.weights());
    weights.put(WORDS, new BertCheckpoint.Tensor(new long[] {kept.size(), hidden}, rows));
    WordPieceTokenizer cut = tokenizer(vocabulary, tokenizer.lowerCase());
    BertShape s = full.shape();
    BertShape shape =
        new BertShape(
            kept.size(),
            s.hidden(),
            s.layers(),
            s.heads(),
            s.intermediate(),
            s.maxPositions(),
            s.layerNormEpsilon());
    for (String text : texts) {
      int[] before = tokenizer.encode(text, WHOLE_TEXT);
      int[] after = cut.encode(text, WHOLE_TEXT);
      int[] mapped = Arrays.stream(before).map(id -> newId[id]).toArray();
      if (!Arrays.equals(mapped, after)) {
        throw new IllegalStateException(
            "the cut vocabulary splits \"" + text + "\" differently from the full one");
      }
    }
    return new BertCheckpoint(
        full.source() + ", cut to " + kept.size() + " tokens", shape, weights, cut);
  }

  private static WordPieceTokenizer tokenizer(List<String> vocabulary, boolean lowerCase) {
    byte[] lines = String.join("\n", vocabulary).getBytes(StandardCharsets.UTF_8);
    try {
      return WordPieceTokenizer.fromVocabTxt(new ByteArrayInputStream(lines), lowerCase);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
