package io.dynnibal.index;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The index stays plain Java: only the state package beside it may use Flink. */
class IndexIsPlainJavaTest {
  @Test
  void noSourceOfTheIndexImportsFlinkOrDjl() throws Exception {
    Path index = Path.of("src", "main", "java", "io", "dynnibal", "index");
    List<String> offenders;
    try (Stream<Path> files = Files.walk(index)) {
      offenders =
          files
              .filter(p -> p.toString().endsWith(".java"))
              .filter(
                  p -> {
                    try {
                      String text = Files.readString(p);
                      return text.contains("import org.apache.flink")
                          || text.contains("import ai.djl")
                          || text.contains("import io.dynnibal.state");
                    } catch (Exception e) {
                      throw new IllegalStateException(e);
                    }
                  })
              .map(Path::toString)
              .toList();
    }
    assertEquals(List.of(), offenders);
  }
}
