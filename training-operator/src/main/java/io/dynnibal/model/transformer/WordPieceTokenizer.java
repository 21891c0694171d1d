package io.dynnibal.model.transformer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * BERT's tokenizer: basic tokenization (clean control characters, space out CJK ideographs,
 * optionally lower-case and strip accents, split on whitespace and punctuation), then greedy
 * longest-match-first WordPiece over the vocabulary, wrapped in {@code [CLS] ... [SEP]}. It
 * reproduces Hugging Face's {@code BertTokenizer} / {@code tokenizers} token ids for the same
 * vocabulary.
 *
 * <p>Stateless after construction and thread-safe.
 */
public final class WordPieceTokenizer {
  private static final int MAX_CHARS_PER_WORD = 100;

  private final Map<String, Integer> vocabulary;
  private final boolean lowerCase;
  private final String continuation;
  private final int unknown;
  private final int classify;
  private final int separator;

  WordPieceTokenizer(
      Map<String, Integer> vocabulary,
      boolean lowerCase,
      String continuation,
      String unknownToken) {
    this.vocabulary = Map.copyOf(vocabulary);
    this.lowerCase = lowerCase;
    this.continuation = continuation;
    this.unknown = required(unknownToken);
    this.classify = required("[CLS]");
    this.separator = required("[SEP]");
  }

  /** From a Hugging Face {@code tokenizer.json} of a WordPiece model. */
  public static WordPieceTokenizer fromTokenizerJson(InputStream json) throws IOException {
    JsonNode root = new ObjectMapper().readTree(json);
    JsonNode model = root.path("model");
    if (!"WordPiece".equals(model.path("type").asText())) {
      throw new IllegalArgumentException(
          "tokenizer.json holds a " + model.path("type").asText() + " model, not WordPiece");
    }
    Map<String, Integer> vocabulary = new HashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = model.path("vocab").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      vocabulary.put(e.getKey(), e.getValue().asInt());
    }
    JsonNode normalizer = root.path("normalizer");
    boolean lowerCase = normalizer.path("lowercase").asBoolean(true);
    return new WordPieceTokenizer(
        vocabulary,
        lowerCase,
        model.path("continuing_subword_prefix").asText("##"),
        model.path("unk_token").asText("[UNK]"));
  }

  /** From a {@code vocab.txt} (one token per line, the line number is its id). */
  public static WordPieceTokenizer fromVocabTxt(InputStream vocab, boolean lowerCase)
      throws IOException {
    String[] lines = new String(vocab.readAllBytes(), StandardCharsets.UTF_8).split("\n", -1);
    Map<String, Integer> vocabulary = new HashMap<>();
    for (int i = 0; i < lines.length; i++) {
      String token = lines[i].strip();
      if (!token.isEmpty()) {
        vocabulary.putIfAbsent(token, i);
      }
    }
    return new WordPieceTokenizer(vocabulary, lowerCase, "##", "[UNK]");
  }

  /**
   * The vocabulary by id, as a {@code vocab.txt} lists it (an id no token has: {@code [unusedN]}).
   */
  public java.util.List<String> tokensById() {
    int size = 0;
    for (int id : vocabulary.values()) {
      size = Math.max(size, id + 1);
    }
    String[] tokens = new String[size];
    vocabulary.forEach((token, id) -> tokens[id] = token);
    for (int i = 0; i < size; i++) {
      if (tokens[i] == null) {
        tokens[i] = "[unused" + i + "]";
      }
    }
    return java.util.List.of(tokens);
  }

  /** Whether text is lower-cased (and accents stripped) before WordPiece. */
  public boolean lowerCase() {
    return lowerCase;
  }

  /**
   * The token ids of {@code text}: {@code [CLS]}, at most {@code maxTokens - 2} word pieces, {@code
   * [SEP]}.
   */
  public int[] encode(String text, int maxTokens) {
    if (maxTokens < 2) {
      throw new IllegalArgumentException("maxTokens must leave room for [CLS] and [SEP]");
    }
    List<Integer> ids = new ArrayList<>();
    ids.add(classify);
    int budget = maxTokens - 2;
    for (String word : basicTokens(text)) {
      if (ids.size() - 1 >= budget) {
        break;
      }
      wordPieces(word, ids, budget + 1);
    }
    ids.add(separator);
    return ids.stream().mapToInt(Integer::intValue).toArray();
  }

  private void wordPieces(String word, List<Integer> ids, int limit) {
    int[] codePoints = word.codePoints().toArray();
    if (codePoints.length > MAX_CHARS_PER_WORD) {
      ids.add(unknown);
      return;
    }
    List<Integer> pieces = new ArrayList<>();
    int start = 0;
    while (start < codePoints.length) {
      int end = codePoints.length;
      Integer found = null;
      while (start < end) {
        String piece = new String(codePoints, start, end - start);
        if (start > 0) {
          piece = continuation + piece;
        }
        found = vocabulary.get(piece);
        if (found != null) {
          break;
        }
        end--;
      }
      if (found == null) {
        pieces = List.of(unknown); // a word with any unmatched part is one [UNK]
        break;
      }
      pieces.add(found);
      start = end;
    }
    for (int id : pieces) {
      if (ids.size() >= limit) {
        return;
      }
      ids.add(id);
    }
  }

  /** Whitespace- and punctuation-split words after cleaning and normalisation. */
  List<String> basicTokens(String text) {
    StringBuilder cleaned = new StringBuilder(text.length());
    text.codePoints()
        .forEach(
            c -> {
              if (c == 0 || c == 0xFFFD || isControl(c)) {
                return;
              }
              if (isWhitespace(c)) {
                cleaned.append(' ');
              } else if (isCjk(c)) {
                cleaned.append(' ').appendCodePoint(c).append(' ');
              } else {
                cleaned.appendCodePoint(c);
              }
            });
    String normalised = cleaned.toString();
    if (lowerCase) {
      normalised = stripAccents(normalised.toLowerCase(java.util.Locale.ROOT));
    }
    List<String> words = new ArrayList<>();
    StringBuilder word = new StringBuilder();
    normalised
        .codePoints()
        .forEach(
            c -> {
              if (c == ' ') {
                flush(word, words);
              } else if (isPunctuation(c)) {
                flush(word, words);
                words.add(new String(Character.toChars(c)));
              } else {
                word.appendCodePoint(c);
              }
            });
    flush(word, words);
    return words;
  }

  private static void flush(StringBuilder word, List<String> words) {
    if (word.length() > 0) {
      words.add(word.toString());
      word.setLength(0);
    }
  }

  private static String stripAccents(String text) {
    String decomposed = Normalizer.normalize(text, Normalizer.Form.NFD);
    StringBuilder out = new StringBuilder(decomposed.length());
    decomposed
        .codePoints()
        .filter(c -> Character.getType(c) != Character.NON_SPACING_MARK)
        .forEach(out::appendCodePoint);
    return out.toString();
  }

  private static boolean isWhitespace(int c) {
    return c == ' '
        || c == '\t'
        || c == '\n'
        || c == '\r'
        || Character.getType(c) == Character.SPACE_SEPARATOR;
  }

  private static boolean isControl(int c) {
    if (c == '\t' || c == '\n' || c == '\r') {
      return false;
    }
    int type = Character.getType(c);
    return type == Character.CONTROL
        || type == Character.FORMAT
        || type == Character.PRIVATE_USE
        || type == Character.SURROGATE
        || type == Character.UNASSIGNED;
  }

  private static boolean isPunctuation(int c) {
    if ((c >= 33 && c <= 47)
        || (c >= 58 && c <= 64)
        || (c >= 91 && c <= 96)
        || (c >= 123 && c <= 126)) {
      return true;
    }
    int type = Character.getType(c);
    return type == Character.CONNECTOR_PUNCTUATION
        || type == Character.DASH_PUNCTUATION
        || type == Character.START_PUNCTUATION
        || type == Character.END_PUNCTUATION
        || type == Character.INITIAL_QUOTE_PUNCTUATION
        || type == Character.FINAL_QUOTE_PUNCTUATION
        || type == Character.OTHER_PUNCTUATION;
  }

  private static boolean isCjk(int c) {
    return (c >= 0x4E00 && c <= 0x9FFF)
        || (c >= 0x3400 && c <= 0x4DBF)
        || (c >= 0x20000 && c <= 0x2A6DF)
        || (c >= 0x2A700 && c <= 0x2B73F)
        || (c >= 0x2B740 && c <= 0x2B81F)
        || (c >= 0x2B820 && c <= 0x2CEAF)
        || (c >= 0xF900 && c <= 0xFAFF)
        || (c >= 0x2F800 && c <= 0x2FA1F);
  }

  private int required(String token) {
    Integer id = vocabulary.get(token);
    if (id == null) {
      throw new IllegalArgumentException("the vocabulary has no " + token + " token");
    }
    return id;
  }
}
