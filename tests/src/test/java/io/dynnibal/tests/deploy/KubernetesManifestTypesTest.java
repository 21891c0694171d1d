package io.dynnibal.tests.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.MapperConfig;
import com.fasterxml.jackson.databind.introspect.Annotated;
import com.fasterxml.jackson.databind.introspect.JacksonAnnotationIntrospector;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import io.strimzi.api.kafka.model.user.KafkaUser;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.kubernetes.operator.api.FlinkDeployment;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.junit.jupiter.api.Test;

/**
 * deploy/k8s read into the operators' own resource classes (the Flink Kubernetes Operator's {@code
 * FlinkDeployment}, Strimzi's {@code Kafka}, {@code KafkaNodePool}, {@code KafkaTopic}, and {@code
 * KafkaUser}, and Kubernetes' core types), strictly: a field those classes do not know fails the
 * read instead of landing in their catch-all maps, and a listener type must be one Strimzi knows. A
 * misspelt field or a wrong listener type is caught before a user applies the manifests.
 *
 * <p>The newest Flink operator API on Maven Central here (1.10.0) predates Flink 2: its {@code
 * FlinkVersion} ends at {@code v1_20}. So {@code spec.flinkVersion} is checked against the build's
 * Flink version instead, and the rest of the FlinkDeployment against the 1.10 classes.
 */
class KubernetesManifestTypesTest {
  private static final Map<String, Class<?>> TYPES =
      Map.of(
          "PersistentVolumeClaim", PersistentVolumeClaim.class,
          "ConfigMap", ConfigMap.class,
          "FlinkDeployment", FlinkDeployment.class,
          "Kafka", Kafka.class,
          "KafkaNodePool", KafkaNodePool.class,
          "KafkaTopic", KafkaTopic.class,
          "KafkaUser", KafkaUser.class,
          "NetworkPolicy", NetworkPolicy.class);

  /** Unknown fields fail: no catch-all setters, no "ignore unknown" on any class. */
  private static final ObjectMapper STRICT =
      YAMLMapper.builder()
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .annotationIntrospector(
              new JacksonAnnotationIntrospector() {
                @Override
                public Boolean hasAnySetter(Annotated a) {
                  return Boolean.FALSE;
                }

                @Override
                public JsonIgnoreProperties.Value findPropertyIgnoralByName(
                    MapperConfig<?> config, Annotated a) {
                  return JsonIgnoreProperties.Value.empty();
                }
              })
          .build();

  private static List<JsonNode> documents() throws IOException {
    Path dir = Path.of("..", "deploy", "k8s");
    List<JsonNode> out = new ArrayList<>();
    for (String file : List.of("flink-deployment.yaml", "kafka.yaml")) {
      try (var it =
          new YAMLMapper().readerFor(JsonNode.class).readValues(dir.resolve(file).toFile())) {
        while (it.hasNext()) {
          JsonNode doc = (JsonNode) it.next();
          if (doc != null && !doc.isEmpty()) {
            out.add(doc);
          }
        }
      }
    }
    return out;
  }

  private static Object read(JsonNode doc) throws IOException {
    String kind = doc.path("kind").asText();
    Class<?> type = TYPES.get(kind);
    if (type == null) {
      throw new AssertionError("no resource class for kind " + kind);
    }
    ObjectNode copy = doc.deepCopy();
    if (type == FlinkDeployment.class) {
      ((ObjectNode) copy.path("spec")).remove("flinkVersion");
    }
    return STRICT.treeToValue(copy, type);
  }

  @Test
  void everyManifestReadsIntoItsOperatorsClass() throws IOException {
    List<String> kinds = new ArrayList<>();
    for (JsonNode doc : documents()) {
      Object resource = read(doc);
      kinds.add(resource.getClass().getSimpleName());
      if (resource instanceof Kafka kafka) {
        assertEquals(List.of(), unknownListenerTypes(kafka));
      }
    }
    assertTrue(kinds.containsAll(TYPES.keySet()), "kinds read: " + kinds);
  }

  /**
   * Listeners whose type Strimzi did not recognise (its enum reads an unknown value as null rather
   * than failing), by name.
   */
  private static List<String> unknownListenerTypes(Kafka kafka) {
    return kafka.getSpec().getKafka().getListeners().stream()
        .filter(l -> l.getType() == null)
        .map(l -> l.getName())
        .toList();
  }

  @Test
  void theFlinkVersionIsTheBuildsFlink() throws IOException {
    String[] version = EnvironmentInformation.getVersion().split("\\.");
    for (JsonNode doc : documents()) {
      if (doc.path("kind").asText().equals("FlinkDeployment")) {
        assertEquals(
            "v" + version[0] + "_" + version[1], doc.path("spec").path("flinkVersion").asText());
      }
    }
  }

  @Test
  void aMisspeltFieldOrAWrongEnumValueFails() throws IOException {
    for (JsonNode doc : documents()) {
      String kind = doc.path("kind").asText();
      if (kind.equals("FlinkDeployment")) {
        ObjectNode typo = doc.deepCopy();
        ((ObjectNode) typo.path("spec")).set("jobManger", typo.path("spec").path("jobManager"));
        assertThrows(IOException.class, () -> read(typo), "a misspelt FlinkDeployment field");
      }
      if (kind.equals("Kafka")) {
        ObjectNode typo = doc.deepCopy();
        ((ObjectNode) typo.path("spec").path("kafka")).put("replcias", 1);
        assertThrows(IOException.class, () -> read(typo), "a misspelt Kafka field");
        ObjectNode listener = doc.deepCopy();
        ((ObjectNode) listener.path("spec").path("kafka").path("listeners").get(0))
            .put("type", "plian");
        assertEquals(List.of("plain"), unknownListenerTypes((Kafka) read(listener)));
      }
    }
  }
}
