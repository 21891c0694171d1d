package io.dynnibal.jobs.config;

import io.dynnibal.settings.Setting;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;

/**
 * Every {@link Setting} of {@link TrainingJobConfig}, in declaration order through its settings
 * groups (a group is a final field whose type declares settings or groups of its own): how each is
 * parsed from and printed to text, checked against its bounds, and listed for users. The one list
 * of keys.
 */
final class SettingsTable {
  /**
   * One declared setting.
   *
   * @param groups the group fields leading from the configuration to the object holding it
   */
  record Entry(String key, List<Field> groups, Field field, Setting declaration) {
    /** The group object of {@code config} that holds this setting. */
    private Object owner(TrainingJobConfig config) throws IllegalAccessException {
      Object owner = config;
      for (Field g : groups) {
        owner = g.get(owner);
      }
      return owner;
    }

    Object get(TrainingJobConfig config) {
      try {
        return field.get(owner(config));
      } catch (IllegalAccessException e) {
        throw new IllegalStateException(e);
      }
    }

    /** The value as a properties file writes it (what {@link #set} reads back). */
    String format(TrainingJobConfig config) {
      Object v = get(config);
      return v instanceof Duration d ? d.toMillis() + "ms" : String.valueOf(v);
    }

    void set(TrainingJobConfig config, String text) {
      Class<?> type = field.getType();
      Object value;
      try {
        if (type == String.class) {
          value = text;
        } else if (type == int.class) {
          value = Integer.parseInt(text);
        } else if (type == long.class) {
          value = Long.parseLong(text);
        } else if (type == float.class) {
          value = Float.parseFloat(text);
        } else if (type == double.class) {
          value = Double.parseDouble(text);
        } else if (type == boolean.class) {
          if (!text.equals("true") && !text.equals("false")) {
            throw new IllegalArgumentException(
                "configuration key " + key + ": \"" + text + "\" is not true or false");
          }
          value = Boolean.parseBoolean(text);
        } else if (type == Duration.class) {
          value = duration(text);
        } else {
          throw new IllegalStateException("no parser for " + type + " (" + key + ")");
        }
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "configuration key " + key + ": \"" + text + "\" is not a number");
      }
      try {
        field.set(owner(config), value);
      } catch (IllegalAccessException e) {
        throw new IllegalStateException(e);
      }
    }

    /** The bound this value breaks (every number must be finite), or null. */
    String problem(TrainingJobConfig config) {
      Setting s = declaration;
      Object v = get(config);
      if (v instanceof Number n) {
        double x = n.doubleValue();
        boolean low = s.aboveMin() ? !(x > s.min()) : !(x >= s.min());
        if (Double.isInfinite(x) || Double.isNaN(x)) {
          return key + " must be a finite number, got " + v;
        }
        if (low || !(x <= s.max())) {
          return key + " must be " + range() + ", got " + v;
        }
      } else if (v instanceof String text) {
        if (s.required() && text.isBlank()) {
          return key + " is required";
        }
        if (!s.pattern().isEmpty() && !text.matches(s.pattern())) {
          return key + " must be " + s.patternHint() + ", got " + text;
        }
      } else if (v instanceof Duration d && (d.isNegative() || (s.aboveMin() && d.isZero()))) {
        return key + " must be a " + (s.aboveMin() ? "positive " : "") + "duration such as 5s";
      }
      return null;
    }

    /** The allowed range in words, e.g. "at least 1" or "in (0, 1]". */
    String range() {
      Setting s = declaration;
      boolean hasMin = s.min() != Double.NEGATIVE_INFINITY;
      boolean hasMax = s.max() != Double.POSITIVE_INFINITY;
      if (hasMin && hasMax) {
        return "in " + (s.aboveMin() ? "(" : "[") + number(s.min()) + ", " + number(s.max()) + "]";
      }
      if (hasMin) {
        return (s.aboveMin() ? "greater than " : "at least ") + number(s.min());
      }
      return hasMax ? "at most " + number(s.max()) : "any number";
    }
  }

  static final List<Entry> ENTRIES = read();

  private SettingsTable() {}

  static Entry entry(String key) {
    for (Entry e : ENTRIES) {
      if (e.key.equals(key)) {
        return e;
      }
    }
    return null;
  }

  static List<String> keys() {
    return ENTRIES.stream().map(Entry::key).toList();
  }

  /** {@code negativesPerQuery} -> {@code negatives.per.query}. */
  static String keyOf(String fieldName) {
    return fieldName.replaceAll("([A-Z])", ".$1").toLowerCase(Locale.ROOT);
  }

  /** A Markdown table of every setting: key, default, what it does. */
  static String markdown() {
    TrainingJobConfig defaults = new TrainingJobConfig();
    StringBuilder out = new StringBuilder("| key | default | what it does |\n|---|---|---|\n");
    for (Entry e : ENTRIES) {
      String bounds = e.declaration.min() == Double.NEGATIVE_INFINITY ? "" : " (" + e.range() + ")";
      String value = e.format(defaults);
      out.append("| `")
          .append(e.key)
          .append("` | ")
          .append(value.isEmpty() ? "" : "`" + value + "`")
          .append(" | ")
          .append(e.declaration.value())
          .append(bounds)
          .append(" |\n");
    }
    return out.append(
            "| `kafka.<property>` | | any Kafka client property, for every client of the job")
        .append(" (e.g. `kafka.security.protocol=SASL_SSL`); a secret only as a config provider")
        .append(" reference, e.g. `${file:PATH:KEY}` (docs/operations.md#security) |\n")
        .toString();
  }

  /**
   * The client properties Kafka itself declares secret ({@code ConfigDef.Type.PASSWORD}: Kafka
   * prints them as {@code [hidden]}), over producers, consumers and admin clients: passwords, JAAS
   * configs, inline PEM keys and certificate chains, OAuth client secrets.
   */
  static final Set<String> KAFKA_PASSWORD_KEYS = kafkaPasswordKeys();

  private static Set<String> kafkaPasswordKeys() {
    Set<String> keys = new TreeSet<>();
    for (ConfigDef def :
        List.of(
            ProducerConfig.configDef(),
            ConsumerConfig.configDef(),
            AdminClientConfig.configDef())) {
      def.configKeys()
          .forEach(
              (name, key) -> {
                if (key.type == ConfigDef.Type.PASSWORD) {
                  keys.add(name);
                }
              });
    }
    return Set.copyOf(keys);
  }

  /**
   * Whether a Kafka client property holds a secret: every key Kafka declares a password ({@link
   * #KAFKA_PASSWORD_KEYS}), and, for keys Kafka does not know (a login module's or plugin's own, a
   * listener-prefixed one), any whose name says password, JAAS, secret, token or key.
   */
  static boolean isSecret(String property) {
    String k = property.toLowerCase(Locale.ROOT);
    return KAFKA_PASSWORD_KEYS.contains(property)
        || k.contains("password")
        || k.contains("jaas")
        || k.contains("secret")
        || k.endsWith(".key")
        || k.contains("token");
  }

  /** {@code 500ms}, {@code 5s}, {@code 2m} or plain milliseconds. */
  static Duration duration(String v) {
    if (v.endsWith("ms")) {
      return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
    }
    if (v.endsWith("s")) {
      return Duration.ofMillis(
          Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 1000));
    }
    if (v.endsWith("m")) {
      return Duration.ofSeconds(
          Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 60));
    }
    return Duration.ofMillis(Long.parseLong(v));
  }

  private static String number(double x) {
    return x == Math.rint(x) && Math.abs(x) < 1e15 ? Long.toString((long) x) : Double.toString(x);
  }

  private static List<Entry> read() {
    List<Entry> entries = new ArrayList<>();
    read(TrainingJobConfig.class, List.of(), entries);
    if (entries.stream().map(Entry::key).collect(Collectors.toSet()).size() != entries.size()) {
      throw new IllegalStateException("two settings share a key");
    }
    return List.copyOf(entries);
  }

  /** The settings {@code type} declares, then those of its groups, each in declaration order. */
  private static void read(Class<?> type, List<Field> groups, List<Entry> entries) {
    for (Field f : type.getDeclaredFields()) {
      if (Modifier.isStatic(f.getModifiers())) {
        continue;
      }
      Setting s = f.getAnnotation(Setting.class);
      if (s != null) {
        String key = s.key().isEmpty() ? keyOf(f.getName()) : s.key();
        entries.add(new Entry(key, groups, f, s));
      } else if (Modifier.isFinal(f.getModifiers()) && isGroup(f.getType())) {
        List<Field> path = new ArrayList<>(groups);
        path.add(f);
        read(f.getType(), List.copyOf(path), entries);
      }
    }
  }

  /** Whether a type declares settings, directly or in groups of its own. */
  private static boolean isGroup(Class<?> type) {
    for (Field f : type.getDeclaredFields()) {
      if (f.isAnnotationPresent(Setting.class)
          || (Modifier.isFinal(f.getModifiers())
              && !Modifier.isStatic(f.getModifiers())
              && f.getType().getName().startsWith("io.dynnibal.")
              && isGroup(f.getType()))) {
        return true;
      }
    }
    return false;
  }
}
