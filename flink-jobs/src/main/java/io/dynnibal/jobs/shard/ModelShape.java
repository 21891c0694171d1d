package io.dynnibal.jobs.shard;

import io.dynnibal.model.DualEncoderConfig;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What a snapshot's model must share with the job's for a shard to encode with it: the tower and
 * its dimensions, features and token limits. Where the pretrained weights came from ({@code
 * checkpoint}) and how fast training ran (trainable layers, the frozen-prefix cache) do not change
 * what the parameters mean.
 */
final class ModelShape {
  private ModelShape() {}

  /** The first setting in which {@code found} differs from {@code expected}, or null. */
  static String difference(DualEncoderConfig expected, DualEncoderConfig found) {
    if (found == null) {
      return "its manifest describes no model";
    }
    Map<String, Object[]> fields = new LinkedHashMap<>();
    fields.put("tower", new Object[] {expected.towerKind(), found.towerKind()});
    fields.put("output dimension", new Object[] {expected.outputDim(), found.outputDim()});
    fields.put("embedding dimension", new Object[] {expected.embeddingDim(), found.embeddingDim()});
    fields.put("hidden dimension", new Object[] {expected.hiddenDim(), found.hiddenDim()});
    fields.put("shared towers", new Object[] {expected.sharedTowers(), found.sharedTowers()});
    fields.put("features", new Object[] {expected.features(), found.features()});
    fields.put("target tokens", new Object[] {expected.maxTokens(), found.maxTokens()});
    fields.put("query tokens", new Object[] {expected.queryMaxTokens(), found.queryMaxTokens()});
    fields.put("transformer shape", new Object[] {expected.bert(), found.bert()});
    for (Map.Entry<String, Object[]> f : fields.entrySet()) {
      Object[] pair = f.getValue();
      if (!Objects.equals(pair[0], pair[1])) {
        return f.getKey() + " " + pair[1] + " where the job has " + pair[0];
      }
    }
    return null;
  }
}
