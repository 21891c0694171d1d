package io.dynnibal.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.dynnibal.cli.options.JsonFormat;
import io.dynnibal.cli.options.JsonlFiles;
import io.dynnibal.search.Hit;
import io.dynnibal.search.Retriever;
import io.dynnibal.snapshot.ParameterSnapshots;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dynnibal search}: try a trained retriever. */
@Command(
    name = "search",
    description = {
      "Search targets with a trained model.",
      "Either --snapshot S --targets T (exact search; the targets are encoded once and cached next to the snapshot)",
      "or --index DIR (the HNSW index `dynnibal export` wrote). Answers each --query, or every line of stdin when",
      "none is given. --json: one object per query,",
      "{\"query\", \"hits\": [{\"rank\", \"target_id\", \"score\", \"text\"}]}."
    })
final class SearchCommand implements Callable<Integer> {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Spec CommandSpec spec;

  @Option(names = "--snapshot", description = "Snapshot directory (a path or file: URI).")
  String snapshot;

  @Option(names = "--targets", description = JsonlFiles.TARGETS + " With --snapshot.")
  Path targets;

  @Option(names = "--index", description = "A directory written by dynnibal export.")
  Path index;

  @Option(names = "--query", description = "A query (repeatable); without one, stdin's lines.")
  List<String> queries = new ArrayList<>();

  @Option(
      names = "--k",
      defaultValue = "10",
      description = "Results per query (default ${DEFAULT-VALUE}).")
  int k;

  @Mixin JsonFormat format;

  @Override
  public Integer call() throws Exception {
    if ((index == null) == (snapshot == null) || (snapshot != null && targets == null)) {
      throw new ParameterException(
          spec.commandLine(), "give either --snapshot with --targets, or --index");
    }
    if (k < 1) {
      throw new ParameterException(spec.commandLine(), "--k must be at least 1");
    }
    try (Retriever retriever =
        index != null
            ? Retriever.exported(index)
            : Retriever.exact(ParameterSnapshots.parse(snapshot), targets)) {
      if (!queries.isEmpty()) {
        for (String q : queries) {
          print(q, retriever.search(q, k), System.out);
        }
        return 0;
      }
      boolean prompt = System.console() != null && !format.json();
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line = ask(in, prompt); line != null; line = ask(in, prompt)) {
        if (!line.isBlank()) {
          print(line.strip(), retriever.search(line.strip(), k), System.out);
        }
      }
    }
    return 0;
  }

  private static String ask(BufferedReader in, boolean prompt) throws java.io.IOException {
    if (prompt) {
      System.err.print("query> ");
      System.err.flush();
    }
    return in.readLine();
  }

  private void print(String query, List<Hit> hits, PrintStream out) throws Exception {
    if (format.json()) {
      List<Map<String, Object>> rows = new ArrayList<>();
      for (int i = 0; i < hits.size(); i++) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("rank", i + 1);
        row.put("target_id", hits.get(i).targetId());
        row.put("score", hits.get(i).score());
        row.put("text", hits.get(i).text());
        rows.add(row);
      }
      Map<String, Object> answer = new LinkedHashMap<>();
      answer.put("query", query);
      answer.put("hits", rows);
      out.println(JSON.writeValueAsString(answer));
      return;
    }
    out.println("query: " + query);
    for (int i = 0; i < hits.size(); i++) {
      Hit h = hits.get(i);
      out.printf("%3d  %7.4f  %-30s %s%n", i + 1, h.score(), h.targetId(), oneLine(h.text(), 90));
    }
  }

  /** The text on one line, cut to {@code max} characters. */
  static String oneLine(String text, int max) {
    String s = text.replaceAll("\\s*\\n\\s*", " / ").strip();
    return s.length() <= max ? s : s.substring(0, max - 1) + "…";
  }
}
