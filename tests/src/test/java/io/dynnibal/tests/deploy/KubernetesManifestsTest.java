package io.dynnibal.tests.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.dynnibal.jobs.config.SecretReferences;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.jobs.training.JobConfiguration;
import io.dynnibal.jobs.training.JobTopics;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.StreamSupport;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.HighAvailabilityOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.util.TimeUtils;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/k8s cannot be applied here (no cluster, no operators), so this checks the fields the
 * manifests rely on against the job's own code: the topics {@link TrainingJob#topics} declares, the
 * Flink settings {@link TrainingJob#flinkConfiguration} runs with, and where the job's files go.
 * The job's settings are the ConfigMap's job.properties, loaded the way the job loads them.
 */
class KubernetesManifestsTest {
  /** The operator's name for the Flink container in a pod template. */
  private static final String MAIN_CONTAINER = "flink-main-container";

  private static final String JOB_CONFIG_MAP = "dynnibal-job-config";
  private static final String JOB_PROPERTIES = "job.properties";

  @TempDir static Path tmp;

  private static List<JsonNode> flink;
  private static List<JsonNode> kafka;
  private static JsonNode deployment;
  private static TrainingJobConfig config;

  @BeforeAll
  static void load() throws IOException {
    Path dir = manifests();
    flink = documents(dir.resolve("flink-deployment.yaml"));
    kafka = documents(dir.resolve("kafka.yaml"));
    deployment = only(flink, "FlinkDeployment");
    JsonNode properties = jobConfigMap().path("data").path(JOB_PROPERTIES);
    assertTrue(properties.isTextual(), "ConfigMap " + JOB_CONFIG_MAP + " has no " + JOB_PROPERTIES);
    Path file = Files.writeString(tmp.resolve(JOB_PROPERTIES), properties.asText());
    config = TrainingJobConfig.load(file, List.of());
  }

  // --- the job's settings
  // -------------------------------------------------------------------------------------

  @Test
  void everyPodServesPrometheusMetricsOnTheNamedPort() {
    JsonNode conf = deployment.path("spec").path("flinkConfiguration");
    assertEquals(
        "org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
        conf.path("metrics.reporter.prom.factory.class").asText());
    String port = conf.path("metrics.reporter.prom.port").asText();
    JsonNode template = deployment.path("spec").path("podTemplate");
    assertEquals(
        port, template.path("metadata").path("annotations").path("prometheus.io/port").asText());
    JsonNode ports = template.path("spec").path("containers").get(0).path("ports");
    assertEquals("metrics", ports.get(0).path("name").asText());
    assertEquals(port, ports.get(0).path("containerPort").asText());
  }

  @Test
  void jobPropertiesValidate() {
    assertEquals(List.of(), config.problems());
  }

  @Test
  void bootstrapServersNameTheStrimziPlainListener() {
    JsonNode plain =
        elements(only(kafka, "Kafka").path("spec").path("kafka").path("listeners")).stream()
            .filter(l -> l.path("type").asText().equals("internal") && !l.path("tls").asBoolean())
            .findFirst()
            .orElseThrow(
                () -> new AssertionError("the Kafka has no internal listener without TLS"));
    // Strimzi's bootstrap service is <Kafka name>-kafka-bootstrap, in the Kafka's namespace.
    assertEquals(
        kafkaName() + "-kafka-bootstrap:" + plain.path("port").asInt(),
        config.kafka.bootstrapServers);
  }

  @Test
  void theKafkaLoginIsAReferenceToTheKafkaUsersSecretMountedOnEveryPod() {
    // The ConfigMap holds no secret: each one is a reference into the Secret that Strimzi's user
    // operator keeps for the job's KafkaUser, mounted read-only where the reference points.
    assertEquals(List.of(), SecretReferences.literalSecrets(config), "secrets in the ConfigMap");
    assertEquals(List.of(), SecretReferences.problems(config.kafka.kafkaProperties));
    Map<String, String> secrets = new TreeMap<>();
    config.kafka.kafkaProperties.forEach(
        (k, v) -> {
          if (SecretReferences.isSecret(k)) {
            secrets.put(k, v);
          }
        });
    assertFalse(secrets.isEmpty(), "job.properties gives the job no Kafka login: nothing checked");
    JsonNode user = only(kafka, "KafkaUser");
    assertEquals(
        kafkaName(), user.path("metadata").path("labels").path("strimzi.io/cluster").asText());
    String authentication = user.path("spec").path("authentication").path("type").asText();
    assertEquals(
        authentication.toUpperCase(java.util.Locale.ROOT),
        config.kafka.kafkaProperties.get("sasl.mechanism"),
        "sasl.mechanism vs the KafkaUser's authentication");
    assertEquals("SASL_PLAINTEXT", config.kafka.kafkaProperties.get("security.protocol"));
    JsonNode listener =
        elements(only(kafka, "Kafka").path("spec").path("kafka").path("listeners")).stream()
            .filter(l -> config.kafka.bootstrapServers.endsWith(":" + l.path("port").asInt()))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no listener on the bootstrap port"));
    assertEquals(authentication, listener.path("authentication").path("type").asText());
    java.util.regex.Pattern dir = java.util.regex.Pattern.compile("\\$\\{dir:([^}:]+):([^}:]+)\\}");
    for (Map.Entry<String, String> secret : secrets.entrySet()) {
      java.util.regex.Matcher m = dir.matcher(secret.getValue());
      assertTrue(m.matches(), secret.getKey() + " is not a ${dir:DIR:FILE}: " + secret.getValue());
      // Strimzi's Secret of a SCRAM user holds these two keys.
      assertTrue(List.of("password", "sasl.jaas.config").contains(m.group(2)), m.group(2));
      assertEquals(
          m.group(1),
          config.kafka.kafkaProperties.get("config.providers.dir.param.allowed.paths"),
          "the directory provider may read the Secret's directory only");
      for (String role : List.of("jobManager", "taskManager")) {
        JsonNode pod = effectivePod(role);
        JsonNode volume =
            elements(pod.path("volumes")).stream()
                .filter(v -> v.path("secret").path("secretName").asText().equals(name(user)))
                .findFirst()
                .orElseThrow(
                    () -> new AssertionError(role + " pods mount no Secret " + name(user)));
        assertEquals(
            Path.of(m.group(1)), mountPath(pod, volume.path("name").asText()), role + " mount");
        assertEquals(
            0, volume.path("secret").path("defaultMode").asInt(0644) & 07, "world-readable");
      }
    }
  }

  // --- Kafka topics
  // --------------------------------------------------------------------------------------------

  @Test
  void everyTopicOfTheJobHasAKafkaTopic() {
    Map<String, JsonNode> declared = kafkaTopics();
    for (NewTopic topic : JobTopics.all(config, 1, (short) 1)) {
      assertTrue(
          declared.containsKey(topic.name()),
          "kafka.yaml has no KafkaTopic " + topic.name() + "; it has " + declared.keySet());
    }
  }

  @Test
  void partitionCountsTheJobFixesAreTheKafkaTopicsCounts() {
    // A count the job fixes does not follow the requested one (model-updates: 1, so updates stay in
    // version order).
    Map<String, Integer> asked3 = partitions(JobTopics.all(config, 3, (short) 1));
    Map<String, Integer> asked5 = partitions(JobTopics.all(config, 5, (short) 1));
    Map<String, JsonNode> declared = kafkaTopics();
    int fixed = 0;
    for (Map.Entry<String, Integer> topic : asked3.entrySet()) {
      if (topic.getValue().equals(asked5.get(topic.getKey()))) {
        fixed++;
        JsonNode kafkaTopic = declared.get(topic.getKey());
        assertNotNull(kafkaTopic, "no KafkaTopic " + topic.getKey());
        assertEquals(
            topic.getValue(),
            kafkaTopic.path("spec").path("partitions").asInt(-1),
            "partitions of " + topic.getKey());
      }
    }
    assertTrue(fixed > 0, "the job fixes no partition count: this test checks nothing");
  }

  @Test
  void topicConfigsOfTheJobAreOnTheKafkaTopics() {
    Map<String, JsonNode> declared = kafkaTopics();
    int checked = 0;
    for (NewTopic topic : JobTopics.all(config, 1, (short) 1)) {
      Map<String, String> configs = topic.configs() == null ? Map.of() : topic.configs();
      for (Map.Entry<String, String> entry : configs.entrySet()) {
        JsonNode kafkaTopic = declared.get(topic.name());
        assertNotNull(kafkaTopic, "no KafkaTopic " + topic.name());
        assertEquals(
            entry.getValue(),
            kafkaTopic.path("spec").path("config").path(entry.getKey()).asText(),
            topic.name() + " " + entry.getKey());
        checked++;
      }
    }
    assertTrue(
        checked > 0,
        "the job sets no topic config (targets: cleanup.policy=compact): this test checks nothing");
  }

  @Test
  void strimziResourcesBelongToTheKafkaCluster() {
    // The topic operator ignores KafkaTopics, and the cluster operator node pools, labelled for
    // another cluster.
    List<JsonNode> labelled = new ArrayList<>(all(kafka, "KafkaTopic"));
    labelled.addAll(all(kafka, "KafkaNodePool"));
    for (JsonNode resource : labelled) {
      assertEquals(
          kafkaName(),
          resource.path("metadata").path("labels").path("strimzi.io/cluster").asText(),
          resource.path("kind").asText() + " " + name(resource));
    }
  }

  @Test
  void kafkaTopicNamesAreValidResourceNames() {
    // Without spec.topicName the resource name is the topic name, and Kubernetes allows only DNS
    // subdomain names.
    for (JsonNode topic : all(kafka, "KafkaTopic")) {
      if (!topic.path("spec").has("topicName")) {
        assertTrue(
            name(topic).matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
                && name(topic).length() <= 253,
            name(topic) + " needs spec.topicName");
      }
    }
  }

  @Test
  void replicationFitsTheBrokers() {
    int brokers =
        all(kafka, "KafkaNodePool").stream()
            .filter(
                pool ->
                    elements(pool.path("spec").path("roles")).stream()
                        .anyMatch(r -> r.asText().equals("broker")))
            .mapToInt(pool -> pool.path("spec").path("replicas").asInt())
            .sum();
    JsonNode broker = only(kafka, "Kafka").path("spec").path("kafka").path("config");
    int minIsr = broker.path("min.insync.replicas").asInt(1);
    for (JsonNode topic : all(kafka, "KafkaTopic")) {
      int replicas =
          topic
              .path("spec")
              .path("replicas")
              .asInt(broker.path("default.replication.factor").asInt(1));
      // Writes with acks=all (transactional sinks) need min.insync.replicas live copies.
      assertTrue(
          minIsr <= replicas && replicas <= brokers,
          name(topic)
              + ": "
              + replicas
              + " replicas, min.insync.replicas "
              + minIsr
              + ", "
              + brokers
              + " brokers");
    }
    int transactionLog = broker.path("transaction.state.log.replication.factor").asInt(3);
    assertTrue(
        transactionLog <= brokers, "transaction.state.log.replication.factor " + transactionLog);
    assertTrue(
        broker.path("transaction.state.log.min.isr").asInt(2) <= transactionLog,
        "transaction.state.log.min.isr");
    assertTrue(
        broker.path("offsets.topic.replication.factor").asInt(3) <= brokers,
        "offsets.topic.replication.factor");
  }

  @Test
  void theBrokerAllowsTheJobsTransactionTimeout() {
    // Otherwise every sink fails at its first transaction (InvalidTxnTimeoutException).
    JsonNode broker = only(kafka, "Kafka").path("spec").path("kafka").path("config");
    long allowed = broker.path("transaction.max.timeout.ms").asLong(900_000); // Kafka's default
    assertTrue(
        config.transactionTimeout().toMillis() <= allowed,
        "the job asks for "
            + config.transactionTimeout().toMillis()
            + " ms, the broker's transaction.max.timeout.ms is "
            + allowed);
  }

  // --- Flink
  // ---------------------------------------------------------------------------------------------------

  @Test
  void flinkConfigurationHoldsEverySettingOfTheJob() {
    Map<String, String> job = JobConfiguration.of(config).toMap();
    assertFalse(job.isEmpty());
    for (Map.Entry<String, String> setting : job.entrySet()) {
      String deployed = flinkConfiguration().get(setting.getKey());
      assertNotNull(
          deployed,
          "flinkConfiguration lacks "
              + setting.getKey()
              + " (the job sets "
              + setting.getValue()
              + ")");
      assertTrue(
          sameValue(setting.getValue(), deployed),
          setting.getKey() + ": the job sets " + setting.getValue() + ", the manifest " + deployed);
    }
  }

  @Test
  void flinkVersionIsTheOneTheJobIsBuiltWith() {
    String version = EnvironmentInformation.getVersion();
    String[] parts = version.split("\\.");
    assertTrue(parts.length >= 2, "Flink version " + version);
    assertEquals(
        "v" + parts[0] + "_" + parts[1], deployment.path("spec").path("flinkVersion").asText());
    assertTrue(
        deployment.path("spec").path("image").asText().contains(version),
        "the image should name Flink "
            + version
            + ": "
            + deployment.path("spec").path("image").asText());
  }

  @Test
  void flinkStateDirectoriesAreOnTheSharedVolume() {
    Path shared = sharedMountPath("jobManager");
    assertEquals(
        shared,
        sharedMountPath("taskManager"),
        "JobManager and TaskManagers mount the volume differently");
    for (String key :
        List.of(
            CheckpointingOptions.CHECKPOINTS_DIRECTORY.key(),
            CheckpointingOptions.SAVEPOINT_DIRECTORY.key())) {
      String location = flinkConfiguration().get(key);
      assertNotNull(location, "flinkConfiguration lacks " + key);
      assertUnder(shared, location, key);
    }
    String ha = flinkConfiguration().get(HighAvailabilityOptions.HA_STORAGE_PATH.key());
    if (ha != null) {
      assertUnder(shared, ha, HighAvailabilityOptions.HA_STORAGE_PATH.key());
    }
  }

  @Test
  void jobCheckpointAndSnapshotDirectoriesAreOnTheSharedVolume() {
    Path shared = sharedMountPath("taskManager");
    assertUnder(shared, config.job.checkpointDir, "checkpoint.dir");
    assertUnder(shared, config.job.snapshotDir, "snapshot.dir");
  }

  @Test
  void sharedVolumeIsReadWriteMany() {
    // JobManager and every TaskManager write checkpoints and savepoints into the same directories.
    assertTrue(
        elements(sharedClaim().path("spec").path("accessModes")).stream()
            .anyMatch(mode -> mode.asText().equals("ReadWriteMany")),
        "the claim must be ReadWriteMany");
  }

  @Test
  void entryClassIsTheJobsMain() throws Exception {
    String entryClass = deployment.path("spec").path("job").path("entryClass").asText();
    assertEquals(io.dynnibal.jobs.training.TrainingJobMain.class.getName(), entryClass);
    assertTrue(
        java.lang.reflect.Modifier.isStatic(
            Class.forName(entryClass).getMethod("main", String[].class).getModifiers()));
  }

  @Test
  void jobManagerFindsTheJobPropertiesWhereTheArgsPointTo() {
    // Application mode: main() reads --config on the JobManager.
    List<String> args =
        elements(deployment.path("spec").path("job").path("args")).stream()
            .map(JsonNode::asText)
            .toList();
    int flag = args.indexOf("--config");
    assertTrue(flag >= 0 && flag + 1 < args.size(), "job args lack --config FILE: " + args);
    Path file = Path.of(args.get(flag + 1));
    JsonNode pod = effectivePod("jobManager");
    JsonNode volume =
        elements(pod.path("volumes")).stream()
            .filter(v -> v.path("configMap").path("name").asText().equals(JOB_CONFIG_MAP))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no volume of ConfigMap " + JOB_CONFIG_MAP));
    assertTrue(
        volume.path("configMap").path("items").isMissingNode(),
        "items would rename the ConfigMap's files");
    assertEquals(mountPath(pod, volume.path("name").asText()), file.getParent());
    assertTrue(
        jobConfigMap().path("data").has(file.getFileName().toString()),
        "the ConfigMap has no " + file.getFileName());
  }

  @Test
  void deploymentParallelismIsTheJobsAndFitsTheSlots() {
    int parallelism = deployment.path("spec").path("job").path("parallelism").asInt(-1);
    assertEquals(
        config.job.parallelism, parallelism, "spec.job.parallelism vs job.properties parallelism");
    JsonNode replicas = deployment.path("spec").path("taskManager").path("replicas");
    if (!replicas.isMissingNode()) {
      int slots =
          Integer.parseInt(flinkConfiguration().get(TaskManagerOptions.NUM_TASK_SLOTS.key()));
      assertTrue(
          replicas.asInt() * slots >= parallelism, "too few slots for parallelism " + parallelism);
    }
  }

  @Test
  void taskManagerRequestsOneGpu() {
    JsonNode resources = mainContainer(effectivePod("taskManager")).path("resources");
    // Extended resources are set as limits; a request, if any, must equal the limit.
    assertEquals("1", resources.path("limits").path("nvidia.com/gpu").asText());
    JsonNode request = resources.path("requests").path("nvidia.com/gpu");
    assertTrue(request.isMissingNode() || request.asText().equals("1"), "GPU request " + request);
  }

  @Test
  void djlLoadsFromTheParentClassLoader() {
    // libtorch loads once per JVM: DJL in a job class loader fails on the second job ("already
    // loaded").
    String patterns =
        flinkConfiguration()
            .getOrDefault(CoreOptions.ALWAYS_PARENT_FIRST_LOADER_PATTERNS_ADDITIONAL.key(), "");
    for (Class<?> type : List.of(ai.djl.engine.Engine.class, ai.djl.pytorch.jni.JniUtils.class)) {
      assertTrue(
          Arrays.stream(patterns.split(";"))
              .map(String::trim)
              .anyMatch(p -> !p.isEmpty() && type.getName().startsWith(p)),
          type.getName() + " is not parent-first: " + patterns);
    }
  }

  @Test
  void taskManagerJvmRunsDjlOfflineWithOneThread() {
    Map<String, String> properties =
        systemProperties(flinkConfiguration().get(CoreOptions.FLINK_TM_JVM_OPTIONS.key()));
    assertEquals("true", properties.get("ai.djl.offline"));
    assertEquals("1", properties.get("ai.djl.pytorch.num_threads"));
    assertEquals("1", properties.get("ai.djl.pytorch.num_interop_threads"));
  }

  @Test
  void djlCacheIsOnAWritableVolume() {
    // libtorch unpacks into DJL_CACHE_DIR on first use; an image's read-only or tiny root
    // filesystem would fail it.
    String cache =
        systemProperties(flinkConfiguration().get(CoreOptions.FLINK_TM_JVM_OPTIONS.key()))
            .get("DJL_CACHE_DIR");
    assertNotNull(cache, "env.java.opts.taskmanager sets no -DDJL_CACHE_DIR");
    JsonNode mount =
        elements(mainContainer(effectivePod("taskManager")).path("volumeMounts")).stream()
            .filter(m -> Path.of(cache).startsWith(Path.of(m.path("mountPath").asText())))
            .findFirst()
            .orElseThrow(
                () -> new AssertionError("DJL_CACHE_DIR " + cache + " is on no mounted volume"));
    assertFalse(mount.path("readOnly").asBoolean(), "the volume of DJL_CACHE_DIR is read-only");
  }

  @Test
  void upgradesGoThroughASavepoint() {
    // Suspending stops with a savepoint and resuming restores it; a stateless upgrade would drop
    // the index.
    assertEquals("savepoint", deployment.path("spec").path("job").path("upgradeMode").asText());
  }

  // --- helpers
  // -------------------------------------------------------------------------------------------------

  /**
   * deploy/k8s of the repository, found from the working directory (the tests module when Maven
   * runs it).
   */
  private static Path manifests() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path candidate = dir.resolve("deploy").resolve("k8s");
      if (Files.isDirectory(candidate)) {
        return candidate;
      }
    }
    throw new AssertionError("no deploy/k8s above " + Path.of("").toAbsolutePath());
  }

  private static List<JsonNode> documents(Path file) throws IOException {
    try (MappingIterator<JsonNode> documents =
        new YAMLMapper().readerFor(JsonNode.class).readValues(file.toFile())) {
      return documents.readAll().stream().filter(JsonNode::isObject).toList();
    }
  }

  private static List<JsonNode> all(List<JsonNode> documents, String kind) {
    return documents.stream().filter(d -> d.path("kind").asText().equals(kind)).toList();
  }

  private static JsonNode only(List<JsonNode> documents, String kind) {
    List<JsonNode> found = all(documents, kind);
    assertEquals(1, found.size(), "documents of kind " + kind);
    return found.get(0);
  }

  private static String name(JsonNode resource) {
    return resource.path("metadata").path("name").asText();
  }

  private static List<JsonNode> elements(JsonNode array) {
    return StreamSupport.stream(array.spliterator(), false).toList();
  }

  private static JsonNode jobConfigMap() {
    return all(flink, "ConfigMap").stream()
        .filter(c -> name(c).equals(JOB_CONFIG_MAP))
        .findFirst()
        .orElseThrow(
            () -> new AssertionError("flink-deployment.yaml has no ConfigMap " + JOB_CONFIG_MAP));
  }

  private static String kafkaName() {
    return name(only(kafka, "Kafka"));
  }

  /** KafkaTopics by topic name: spec.topicName, else the resource name (Strimzi's rule). */
  private static Map<String, JsonNode> kafkaTopics() {
    Map<String, JsonNode> topics = new TreeMap<>();
    for (JsonNode topic : all(kafka, "KafkaTopic")) {
      JsonNode topicName = topic.path("spec").path("topicName");
      topics.put(topicName.isTextual() ? topicName.asText() : name(topic), topic);
    }
    return topics;
  }

  private static Map<String, Integer> partitions(List<NewTopic> topics) {
    Map<String, Integer> partitions = new HashMap<>();
    topics.forEach(t -> partitions.put(t.name(), t.numPartitions()));
    return partitions;
  }

  private static Map<String, String> flinkConfiguration() {
    Map<String, String> conf = new HashMap<>();
    deployment
        .path("spec")
        .path("flinkConfiguration")
        .properties()
        .forEach(e -> conf.put(e.getKey(), e.getValue().asText()));
    return conf;
  }

  /** Equal as written, or the same duration ("10 s" and "10000ms"). */
  private static boolean sameValue(String expected, String actual) {
    if (expected.equals(actual)) {
      return true;
    }
    try {
      return TimeUtils.parseDuration(expected).equals(TimeUtils.parseDuration(actual));
    } catch (RuntimeException notDurations) {
      return false;
    }
  }

  /** {@code -Dkey=value} tokens of a JVM options line. */
  private static Map<String, String> systemProperties(String options) {
    assertNotNull(options, "flinkConfiguration lacks " + CoreOptions.FLINK_TM_JVM_OPTIONS.key());
    Map<String, String> properties = new HashMap<>();
    for (String token : options.trim().split("\\s+")) {
      int eq = token.indexOf('=');
      if (token.startsWith("-D") && eq > 2) {
        properties.put(token.substring(2, eq), token.substring(eq + 1));
      }
    }
    return properties;
  }

  /**
   * The pod spec the operator builds for {@code jobManager} or {@code taskManager}:
   * spec.podTemplate with the role's template merged in the operator's default way, objects key by
   * key and arrays element by element by position
   * (kubernetes.operator.pod-template.merge-arrays-by-name is false unless set).
   */
  private static JsonNode effectivePod(String role) {
    JsonNode spec = deployment.path("spec");
    return merge(spec.path("podTemplate"), spec.path(role).path("podTemplate")).path("spec");
  }

  private static JsonNode merge(JsonNode base, JsonNode override) {
    if (override == null || override.isMissingNode() || override.isNull()) {
      return base;
    }
    if (base == null || base.isMissingNode() || base.isNull()) {
      return override;
    }
    if (base.isObject() && override.isObject()) {
      ObjectNode merged = ((ObjectNode) base).deepCopy();
      override
          .properties()
          .forEach(e -> merged.set(e.getKey(), merge(base.get(e.getKey()), e.getValue())));
      return merged;
    }
    if (base.isArray() && override.isArray()) {
      ArrayNode merged = JsonNodeFactory.instance.arrayNode();
      for (int i = 0; i < Math.max(base.size(), override.size()); i++) {
        merged.add(merge(base.get(i), override.get(i)));
      }
      return merged;
    }
    return override;
  }

  private static JsonNode mainContainer(JsonNode pod) {
    return elements(pod.path("containers")).stream()
        .filter(c -> c.path("name").asText().equals(MAIN_CONTAINER))
        .findFirst()
        .orElseThrow(() -> new AssertionError("the pod template has no " + MAIN_CONTAINER));
  }

  private static Path mountPath(JsonNode pod, String volume) {
    return elements(mainContainer(pod).path("volumeMounts")).stream()
        .filter(m -> m.path("name").asText().equals(volume))
        .findFirst()
        .map(m -> Path.of(m.path("mountPath").asText()))
        .orElseThrow(() -> new AssertionError(MAIN_CONTAINER + " does not mount volume " + volume));
  }

  /** The one PersistentVolumeClaim of flink-deployment.yaml: checkpoints, savepoints, snapshots. */
  private static JsonNode sharedClaim() {
    return only(flink, "PersistentVolumeClaim");
  }

  /** Where the role's Flink container mounts the shared claim. */
  private static Path sharedMountPath(String role) {
    JsonNode pod = effectivePod(role);
    String claim = name(sharedClaim());
    JsonNode volume =
        elements(pod.path("volumes")).stream()
            .filter(v -> v.path("persistentVolumeClaim").path("claimName").asText().equals(claim))
            .findFirst()
            .orElseThrow(() -> new AssertionError(role + " pods have no volume of claim " + claim));
    return mountPath(pod, volume.path("name").asText());
  }

  /** A {@code file:} URI or a plain path, under {@code mount}. */
  private static void assertUnder(Path mount, String location, String what) {
    URI uri = URI.create(location);
    if (uri.getScheme() != null) {
      assertEquals(
          "file", uri.getScheme(), what + " " + location + " is not on the mounted volume");
    }
    Path path = Path.of(uri.getScheme() == null ? location : uri.getPath()).normalize();
    assertTrue(
        path.startsWith(mount) && !path.equals(mount),
        what + " " + location + " is not below the shared volume's mount " + mount);
  }
}
