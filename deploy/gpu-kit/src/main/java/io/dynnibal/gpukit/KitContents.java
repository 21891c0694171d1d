package io.dynnibal.gpukit;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.dynnibal.data.JsonlCorpus;
import io.dynnibal.data.LabelledQuery;
import io.dynnibal.data.TargetText;
import io.dynnibal.model.transformer.BertCheckpoint;
import io.dynnibal.model.transformer.HuggingFaceExport;
import io.dynnibal.model.transformer.Safetensors;
import io.dynnibal.training.local.LocalTraining;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Writes what the kit trains on, on the machine that packs it: a slice of a corpus ({@code
 * data/targets.jsonl}, {@code data/train.jsonl}: at most {@code max-targets} targets and the
 * training pairs that name them) and the checkpoint cut to the word pieces of those texts, in half
 * precision ({@code model/}, a Hugging Face directory; {@link VocabularySubset}), and the DJL
 * version whose JNI the kit must build ({@code jni/DJL_VERSION}). The GPU and the CPU runs of the
 * smoke read the same files, so they start from the same weights.
 *
 * <pre>
 * KitContents --targets F --train F --out DIR [--max-targets N] [--checkpoint C] [--seed S]
 * </pre>
 */
public final class KitContents {
  private KitContents() {}

  public static void main(String[] args) throws IOException {
    Map<String, String> a = Arguments.parse(args);
    Path out = Path.of(Arguments.required(a, "out"));
    List<TargetText> targets = JsonlCorpus.readTargets(Path.of(Arguments.required(a, "targets")));
    List<LabelledQuery> train = JsonlCorpus.readQueries(Path.of(Arguments.required(a, "train")));
    int maxTargets = Integer.parseInt(a.getOrDefault("max-targets", "4096"));
    long seed = Long.parseLong(a.getOrDefault("seed", "7"));
    String checkpoint = a.getOrDefault("checkpoint", BertCheckpoint.MINILM);

    if (maxTargets < targets.size()) {
      targets = LocalTraining.subset(targets, null, train, maxTargets, seed);
    }
    Set<String> kept = new HashSet<>();
    targets.forEach(t -> kept.add(t.targetId()));
    List<LabelledQuery> pairs = train.stream().filter(q -> kept.contains(q.targetId())).toList();
    Path data = Files.createDirectories(out.resolve("data"));
    writeTargets(data.resolve("targets.jsonl"), targets);
    writeQueries(data.resolve("train.jsonl"), pairs);

    List<String> texts = new ArrayList<>(targets.size() + pairs.size());
    targets.forEach(t -> texts.add(t.text()));
    pairs.forEach(q -> texts.add(q.text()));
    BertCheckpoint cut = VocabularySubset.of(BertCheckpoint.load(checkpoint), texts);
    HuggingFaceExport.write(
        out.resolve("model"),
        cut.weights(),
        cut.shape(),
        cut.tokenizer(),
        cut.shape().maxPositions(),
        Safetensors.Precision.F16);
    Files.writeString(
        Files.createDirectories(out.resolve("jni")).resolve("DJL_VERSION"),
        ai.djl.engine.Engine.getDjlVersion() + "\n");
    System.out.printf(
        "kit contents: %,d targets, %,d training pairs, %s (%,d tokens) in half precision%n",
        targets.size(), pairs.size(), checkpoint, cut.shape().vocabulary());
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  private static void writeTargets(Path file, List<TargetText> targets) throws IOException {
    try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      for (TargetText t : targets) {
        Map<String, String> row = new LinkedHashMap<>();
        row.put("target_id", t.targetId());
        row.put("target_text", t.text());
        w.write(JSON.writeValueAsString(row));
        w.newLine();
      }
    }
  }

  private static void writeQueries(Path file, List<LabelledQuery> queries) throws IOException {
    try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      for (LabelledQuery q : queries) {
        Map<String, String> row = new LinkedHashMap<>();
        row.put("query_id", q.queryId());
        row.put("query_text", q.text());
        row.put("target_id", q.targetId());
        w.write(JSON.writeValueAsString(row));
        w.newLine();
      }
    }
  }
}
