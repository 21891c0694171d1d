package io.dynnibal.gpukit;

import java.util.LinkedHashMap;
import java.util.Map;

/** {@code --name value} pairs: the kit's Java has no command-line library, to stay small. */
final class Arguments {
  private Arguments() {}

  static Map<String, String> parse(String[] args) {
    Map<String, String> values = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException(
            "expected --name value pairs, got \"" + args[i] + "\" at position " + (i + 1));
      }
      values.put(args[i].substring(2), args[++i]);
    }
    return values;
  }

  static String required(Map<String, String> values, String name) {
    String value = values.get(name);
    if (value == null) {
      throw new IllegalArgumentException("--" + name + " is required");
    }
    return value;
  }
}
