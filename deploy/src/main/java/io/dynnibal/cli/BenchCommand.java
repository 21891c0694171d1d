package io.dynnibal.cli;

import io.dynnibal.data.JsonlCorpus;
import io.dynnibal.index.bench.BenchJson;
import io.dynnibal.index.bench.IndexBenchmark;
import io.dynnibal.index.bench.MaintenanceBenchmark;
import io.dynnibal.index.bench.ReencodeBenchmark;
import io.dynnibal.index.sgtree.TreeRepair;
import io.dynnibal.jobs.config.TrainingJobConfig;
import io.dynnibal.local.Corpus;
import io.dynnibal.model.DualEncoder;
import io.dynnibal.snapshot.ParameterSnapshots;
import io.dynnibal.state.bench.ShardHeapBenchmark;
import io.dynnibal.training.bench.SamplerFidelityBenchmark;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code dynnibal bench ...}: benchmarks that print JSON figures. Never tests: timings belong here.
 */
@Command(
    name = "bench",
    description =
        "Benchmarks of the index, sampler, tree maintenance and trainer; each prints one JSON object.",
    subcommands = {
      BenchCommand.Index.class,
      BenchCommand.ShardHeap.class,
      BenchCommand.Maintenance.class,
      BenchCommand.Reencode.class,
      BenchCommand.Trainer.class,
      BenchCommand.TowerReencode.class,
      BenchCommand.SamplerFidelity.class,
      BenchCommand.Pipeline.class,
      BenchCommand.Scale.class
    })
final class BenchCommand implements Runnable {
  @Spec CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(
        spec.commandLine(),
        "Missing a benchmark: index, maintenance, reencode, trainer, tower-reencode,"
            + " sampler-fidelity, pipeline or scale.");
  }

  static void print(Map<String, Object> figures, Path json) throws java.io.IOException {
    String out = BenchJson.of(figures);
    System.out.println(out);
    if (json != null) {
      Files.writeString(json, out + System.lineSeparator());
    }
  }

  @Command(
      name = "maintenance",
      description = {
        "Tree repair after the cache moves (a near-identity re-encoding map) vs a full rebuild of the tree",
        "vs Lucene 9.12 HNSW over the same vectors; sampler overlap after repair and after rebuild."
      })
  static final class Maintenance implements Callable<Integer> {
    @Option(
        names = "--targets",
        defaultValue = "100000",
        description = "Number of targets (default ${DEFAULT-VALUE}).")
    int targets;

    @Option(
        names = "--dim",
        defaultValue = "128",
        description = "Cache dimension d' (default ${DEFAULT-VALUE}).")
    int dim;

    @Option(
        names = "--drift",
        defaultValue = "0.05",
        description = "Strength of the map I + drift * G / sqrt(d') (default ${DEFAULT-VALUE}).")
    double drift;

    @Option(names = "--seed", defaultValue = "1", description = "Seed (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(
        names = "--queries",
        defaultValue = "50",
        description = "Queries for sampler quality (default ${DEFAULT-VALUE}).")
    int queries;

    @Option(
        names = "--mode",
        defaultValue = "bounded",
        description =
            "Repair bookkeeping: bounded (the paper's fast check) or exact (default ${DEFAULT-VALUE}).")
    String mode;

    @Option(
        names = "--no-hnsw",
        description = "Skip the Lucene HNSW rebuild (slow at millions of vectors).")
    boolean noHnsw;

    @Option(names = "--json", description = "Also write the JSON to this file.")
    Path json;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      if (targets < 100 || dim < 2 || !(drift >= 0) || queries < 1) {
        throw new ParameterException(
            spec.commandLine(), "need targets >= 100, dim >= 2, drift >= 0, queries >= 1");
      }
      TreeRepair.Mode repairMode;
      try {
        repairMode = TreeRepair.Mode.valueOf(mode.toUpperCase(java.util.Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new ParameterException(
            spec.commandLine(), "--mode must be bounded or exact, got " + mode);
      }
      print(
          MaintenanceBenchmark.run(
              new MaintenanceBenchmark.Config(
                  targets, dim, drift, seed, queries, 64, repairMode, !noHnsw)),
          json);
      return 0;
    }
  }

  @Command(
      name = "reencode",
      description = {
        "Approximate re-encoding (s' new encodings + regression + one d' x d' map over the cache) vs running",
        "the new target tower over every target; mean cosine of the approximate cache to the true one."
      })
  static final class Reencode implements Callable<Integer> {
    @Option(
        names = "--targets",
        defaultValue = "50000",
        description = "Number of targets (default ${DEFAULT-VALUE}).")
    int targets;

    @Option(
        names = "--landmarks",
        defaultValue = "128",
        description = "Nystrom landmarks d' (default ${DEFAULT-VALUE}).")
    int landmarks;

    @Option(
        names = "--samples",
        defaultValue = "4096",
        description = "Regression samples s' (default ${DEFAULT-VALUE}).")
    int samples;

    @Option(
        names = "--drift",
        defaultValue = "0.05",
        description =
            "Relative weight change between the old and new tower (default ${DEFAULT-VALUE}).")
    double drift;

    @Option(names = "--seed", defaultValue = "1", description = "Seed (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--json", description = "Also write the JSON to this file.")
    Path json;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      if (landmarks < 1 || samples < landmarks || targets < samples || !(drift >= 0)) {
        throw new ParameterException(
            spec.commandLine(), "need 1 <= landmarks <= samples <= targets and drift >= 0");
      }
      print(
          ReencodeBenchmark.run(
              new ReencodeBenchmark.Config(targets, landmarks, samples, drift, seed)),
          json);
      return 0;
    }
  }

  @Command(
      name = "shard-heap",
      description = {
        "The heap one shard's index (SG tree, vectors, ids) takes per target, alone in this JVM:",
        "targets inserted one by one as a shard indexes them. bench scale's heap figure holds the",
        "whole job's; this one only the index."
      })
  static final class ShardHeap implements Callable<Integer> {
    @Option(
        names = "--targets",
        defaultValue = "200000",
        description = "Number of targets (default ${DEFAULT-VALUE}).")
    int targets;

    @Option(
        names = "--dim",
        defaultValue = "64",
        description = "Vector dimension d' (default ${DEFAULT-VALUE}, the job's).")
    int dim;

    @Option(
        names = "--seed",
        defaultValue = "7",
        description = "Seed of the vectors (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--json", description = "Also write the JSON to this file.")
    Path json;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      if (targets < 1 || dim < 1) {
        throw new ParameterException(spec.commandLine(), "need targets and dim >= 1");
      }
      print(ShardHeapBenchmark.run(new ShardHeapBenchmark.Config(targets, dim, seed)), json);
      return 0;
    }
  }

  @Command(
      name = "index",
      defaultValueProvider = JobSettingDefaults.class,
      description = {
        "The practical DyNNIBAL sampler vs brute-force top-K on synthetic clustered unit vectors,",
        "same JVM, same vectors, one thread each. TV distance to the softmax (exact, no sampling noise)",
        "for up to 100,000 targets."
      })
  static final class Index implements Callable<Integer> {
    @Option(
        names = "--targets",
        defaultValue = "100000",
        description = "Number of targets (default ${DEFAULT-VALUE}).")
    int targets;

    @Option(
        names = "--dim",
        defaultValue = "128",
        description = "Vector dimension d' (default ${DEFAULT-VALUE}).")
    int dim;

    @Option(
        names = "--queries",
        defaultValue = "200",
        description = "Timed queries (default ${DEFAULT-VALUE}).")
    int queries;

    @Option(
        names = "--negatives",
        defaultValue = "64",
        description = "K negatives per query (default ${DEFAULT-VALUE}).")
    int negatives;

    @Option(
        names = "--seed",
        defaultValue = "1",
        description = "Seed of data, queries and sampler (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(
        names = "--base",
        descriptionKey = "tree.base",
        description = "SG tree base b (default ${DEFAULT-VALUE}).")
    double base;

    @Option(
        names = "--candidates",
        descriptionKey = "mh.candidates.per.negative",
        description =
            "The proposal keeps the closest clusters holding this many targets per negative (default ${DEFAULT-VALUE}).")
    int candidates;

    @Option(
        names = "--max-clusters",
        defaultValue = "300",
        description = "FindClustering's cap (default ${DEFAULT-VALUE}).")
    int maxClusters;

    @Option(names = "--json", description = "Also write the JSON to this file.")
    Path json;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      if (targets < 1 || dim < 1 || queries < 1 || negatives < 1 || negatives > targets) {
        throw new ParameterException(
            spec.commandLine(), "need targets, dim, queries >= 1 and 1 <= negatives <= targets");
      }
      IndexBenchmark.Config defaults =
          IndexBenchmark.Config.defaults(targets, dim, queries, negatives, seed);
      IndexBenchmark.Config config =
          new IndexBenchmark.Config(
              targets,
              dim,
              queries,
              negatives,
              seed,
              base,
              defaults.beta(),
              defaults.gamma(),
              defaults.deepestRadius(),
              maxClusters,
              candidates,
              defaults.chainLength());
      print(IndexBenchmark.run(config), json);
      return 0;
    }
  }

  @Command(
      name = "trainer",
      description = {
        "Trainer speed on a real corpus: steps/s at a batch with sampled + uniform negatives (drawn uniformly here;",
        "a step costs the same), and seconds to featurize and encode every target."
      })
  static final class Trainer implements Callable<Integer> {
    @Option(names = "--targets", required = true, description = "Targets JSONL (gz or plain).")
    Path targets;

    @Option(names = "--train", required = true, description = "Training pairs JSONL (gz or plain).")
    Path train;

    @Option(
        names = "--batch",
        defaultValue = "128",
        description = "Queries per step (default ${DEFAULT-VALUE}).")
    int batch;

    @Option(
        names = "--sampled",
        defaultValue = "64",
        description = "Sampled negatives (default ${DEFAULT-VALUE}).")
    int sampled;

    @Option(
        names = "--uniform",
        defaultValue = "64",
        description = "Uniform negatives (default ${DEFAULT-VALUE}).")
    int uniform;

    @Option(
        names = "--steps",
        defaultValue = "200",
        description = "Timed steps (default ${DEFAULT-VALUE}).")
    int steps;

    @Option(names = "--seed", defaultValue = "1", description = "Seed (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--json", description = "Also write the JSON to this file.")
    Path json;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      if (batch < 1 || sampled < 0 || uniform < 0 || steps < 1) {
        throw new ParameterException(
            spec.commandLine(), "need batch >= 1, steps >= 1 and non-negative negatives");
      }
      print(
          io.dynnibal.training.bench.TrainerBenchmark.run(
              new io.dynnibal.training.bench.TrainerBenchmark.Options(
                  targets,
                  train,
                  io.dynnibal.model.DualEncoderConfig.DEFAULT,
                  batch,
                  sampled,
                  uniform,
                  steps,
                  20,
                  seed)),
          json);
      return 0;
    }
  }

  @Command(
      name = "tower-reencode",
      defaultValueProvider = JobSettingDefaults.class,
      description = {
        "Approximate re-encoding with the real DJL tower on a corpus: after --steps training steps, move every cached",
        "vector by one d'xd' map fitted on --samples re-encoded targets vs re-encode every target exactly."
      })
  static final class TowerReencode implements Callable<Integer> {
    @Option(names = "--targets", required = true, description = "Targets JSONL (gz or plain).")
    Path targets;

    @Option(names = "--train", required = true, description = "Training pairs JSONL (gz or plain).")
    Path train;

    @Option(
        names = "--warmup-steps",
        defaultValue = "200",
        description = "Steps before the cache is built (default ${DEFAULT-VALUE}).")
    int warmupSteps;

    @Option(
        names = "--steps",
        descriptionKey = "reencode.every",
        description = "Steps between cache and re-encode, w (default ${DEFAULT-VALUE}).")
    int steps;

    @Option(
        names = "--landmarks",
        descriptionKey = "landmarks",
        description = "d' (default ${DEFAULT-VALUE}).")
    int landmarks;

    @Option(
        names = "--samples",
        descriptionKey = "regression.samples",
        description = "s' (default ${DEFAULT-VALUE}).")
    int samples;

    @Option(
        names = "--batch",
        descriptionKey = "batch.size",
        description = "Batch (default ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--seed", defaultValue = "1", description = "Seed (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(
        names = "--tower",
        defaultValue = "bag",
        description =
            "bag (the default model) or transformer (the pretrained checkpoint, fine-tuned at 5e-5)"
                + " (default ${DEFAULT-VALUE}).")
    String tower;

    @Option(
        names = "--checkpoint",
        descriptionKey = "model.checkpoint",
        description = "A transformer's weights (default ${DEFAULT-VALUE}).")
    String checkpoint;

    @Option(
        names = "--max-tokens",
        defaultValue = "64",
        description = "A transformer's tokens per text (default ${DEFAULT-VALUE}).")
    int maxTokens;

    @Option(
        names = "--trainable-layers",
        defaultValue = "0",
        description =
            "A transformer's top layers that fine-tune; the rest and the embeddings stay frozen (0:"
                + " all; default ${DEFAULT-VALUE}).")
    int trainableLayers;

    @Option(
        names = "--max-targets",
        defaultValue = "0",
        description = "Use at most N targets, those of training pairs first (0: all).")
    int maxTargets;

    @Option(names = "--json", description = "Also write the JSON to this file.")
    Path json;

    @Override
    public Integer call() throws Exception {
      io.dynnibal.model.DualEncoderConfig model =
          io.dynnibal.model.TowerKind.of(tower) == io.dynnibal.model.TowerKind.TRANSFORMER
              ? io.dynnibal.model.DualEncoderConfig.transformer(
                  checkpoint, 0, maxTokens, 0, trainableLayers, true, 20f)
              : io.dynnibal.model.DualEncoderConfig.DEFAULT;
      print(
          io.dynnibal.training.bench.TowerReencodeBenchmark.run(
              new io.dynnibal.training.bench.TowerReencodeBenchmark.Options(
                  targets,
                  train,
                  warmupSteps,
                  steps,
                  landmarks,
                  samples,
                  batch,
                  seed,
                  model,
                  maxTargets)),
          json);
      return 0;
    }
  }

  @Command(
      name = "sampler-fidelity",
      description = {
        "DyNNIBAL's MH sampler on a trained model, apart from training: every target encoded once,",
        "exact Nystrom cache, one SG tree; per query, k draws for each chain length and cluster budget,",
        "and their fidelity (overlap_topk, logit_ratio, mass_ratio) to exact sampling at full dimension."
      })
  static final class SamplerFidelity implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(
        names = "--model",
        required = true,
        description = "A model directory (a parameter snapshot: final/, kept/ or model-N/).")
    Path model;

    @Option(
        names = "--targets",
        description = "Targets JSONL (default: the bundled Debian corpus, with its dev queries).")
    Path targets;

    @Option(names = "--queries", description = "Queries JSONL (with --targets).")
    Path queries;

    @Option(
        names = "--query-count",
        defaultValue = "200",
        description = "Queries measured (default ${DEFAULT-VALUE}).")
    int queryCount;

    @Option(
        names = "--landmarks",
        defaultValue = "128",
        description = "d' (default ${DEFAULT-VALUE}, the experiment's).")
    int landmarks;

    @Option(
        names = "--per-example",
        defaultValue = "8",
        description = "Draws per query k (default ${DEFAULT-VALUE}).")
    int perExample;

    @Option(
        names = "--chains",
        defaultValue = "8,32",
        split = ",",
        description = "MH chain lengths (default ${DEFAULT-VALUE}).")
    List<Integer> chains;

    @Option(
        names = "--clusters",
        defaultValue = "100,400,1600",
        split = ",",
        description =
            "FindClustering budgets, clusters per query (the job: mh.cluster.share of a shard's"
                + " targets, at most mh.max.clusters) (default ${DEFAULT-VALUE}).")
    List<Integer> clusters;

    @Option(
        names = "--deepest-radii",
        defaultValue = "0.3",
        split = ",",
        description =
            "FindClustering refines clusters near the query down to this radius (the shards use 0.3)"
                + " (default ${DEFAULT-VALUE}).")
    List<Double> radii;

    @Option(
        names = "--exact-inside",
        defaultValue = "0,64",
        split = ",",
        description =
            "The proposal draws exactly inside clusters of at most this many targets, mh.exact.inside"
                + " (0: uniformly inside every cluster) (default ${DEFAULT-VALUE}).")
    List<Integer> exactInside;

    @Option(
        names = "--exact-targets",
        defaultValue = "1024",
        description =
            "With --exact-inside: the heaviest small clusters are weighed by their exact mass until"
                + " they hold this many targets, mh.exact.targets (default ${DEFAULT-VALUE}).")
    int exactTargets;

    @Option(names = "--seed", defaultValue = "1", description = "Seed (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--json", description = "Also write the JSON to this file.")
    Path json;

    @Override
    public Integer call() throws Exception {
      if ((targets == null) != (queries == null)) {
        throw new ParameterException(spec.commandLine(), "--targets and --queries go together");
      }
      Corpus corpus =
          targets == null
              ? Corpus.bundledDebian()
              : new Corpus(
                  targets.getFileName().toString(),
                  JsonlCorpus.readTargets(targets),
                  List.of(),
                  JsonlCorpus.readQueries(queries));
      try (DualEncoder encoder = ParameterSnapshots.readEncoder(model.toUri())) {
        print(
            SamplerFidelityBenchmark.run(
                new SamplerFidelityBenchmark.Options(
                    encoder,
                    corpus.targets(),
                    corpus.eval(),
                    queryCount,
                    landmarks,
                    new TrainingJobConfig().treeBase,
                    perExample,
                    chains,
                    clusters,
                    radii,
                    exactInside,
                    exactTargets,
                    seed)),
            json);
      }
      return 0;
    }
  }

  @Command(
      name = "pipeline",
      description = {
        "The streaming job against its own trainer: the full job (in-process broker, MiniCluster, RocksDB shards)",
        "and the trainer alone on the same pairs, batch size and negative dose, in one run; steps/s of each, their",
        "ratio, the trainer's idle share, shard and merge time per batch, feedback latency of the model updates.",
        "The experiment's settings (--config and --set override them); bundled Debian corpus unless given."
      })
  static final class Pipeline implements Callable<Integer> {
    @Option(
        names = "--warmup-steps",
        defaultValue = "60",
        description =
            "Steps before the timed window: the first model updates, JIT (default ${DEFAULT-VALUE}).")
    int warmupSteps;

    @Option(
        names = "--steps",
        defaultValue = "240",
        description = "Timed steps (default ${DEFAULT-VALUE}).")
    int steps;

    @Option(
        names = "--tower",
        defaultValue = "bag",
        description = "bag (default) or transformer: the experiment's settings for that tower.")
    String tower;

    @picocli.CommandLine.Mixin LocalRunOptions run;

    @Option(names = "--json", description = "Also write the JSON to this file.")
    Path json;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      if (warmupSteps < 0 || steps < 2) {
        throw new ParameterException(
            spec.commandLine(), "need --warmup-steps >= 0 and --steps >= 2");
      }
      List<String> defaults = ExperimentCommand.towerDefaults(tower, spec.commandLine());
      io.dynnibal.local.Corpus corpus = run.corpus(spec.commandLine());
      io.dynnibal.jobs.config.TrainingJobConfig config = run.config(defaults);
      Path work = run.workDir("dynnibal-bench-pipeline-");
      try {
        print(
            io.dynnibal.local.PipelineBenchmark.run(
                new io.dynnibal.local.PipelineBenchmark.Options(
                    corpus, config, warmupSteps, steps, work, config.seed),
                System.err),
            json);
      } finally {
        run.cleanUp(work);
      }
      return 0;
    }
  }

  @Command(
      name = "scale",
      description = {
        "N synthetic targets (texts shaped like the bundled Debian corpus) through the real job on this machine",
        "(in-process broker, MiniCluster, RocksDB): indexing rate, heap and RocksDB bytes per target, steps/s,",
        "checkpoint size, and a restore (cancel, resume from the checkpoint, first step) with the shards' tree",
        "rebuild time. The job's settings (--config and --set override them)."
      })
  static final class Scale implements Callable<Integer> {
    @Option(
        names = "--targets",
        defaultValue = "1000000",
        description = "Synthetic targets (default ${DEFAULT-VALUE}).")
    int targets;

    @Option(
        names = "--warmup-steps",
        defaultValue = "20",
        description = "Steps before the timed window (default ${DEFAULT-VALUE}).")
    int warmupSteps;

    @Option(
        names = "--steps",
        defaultValue = "60",
        description = "Timed steps (default ${DEFAULT-VALUE}).")
    int steps;

    @picocli.CommandLine.Mixin JobSettingsOptions settings;

    @Option(
        names = "--work-dir",
        description =
            "Where the broker, checkpoints and snapshots live (default: a temporary directory,"
                + " deleted afterwards).")
    Path workDir;

    @Option(names = "--json", description = "Also write the JSON to this file.")
    Path json;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      if (targets < 1 || warmupSteps < 0 || steps < 2) {
        throw new ParameterException(
            spec.commandLine(), "need --targets >= 1, --warmup-steps >= 0 and --steps >= 2");
      }
      io.dynnibal.jobs.config.TrainingJobConfig config = settings.config(List.of());
      Path work = workDir != null ? workDir : Files.createTempDirectory("dynnibal-bench-scale-");
      try {
        print(
            io.dynnibal.local.ScaleBenchmark.run(
                new io.dynnibal.local.ScaleBenchmark.Options(
                    targets, config, warmupSteps, steps, work, config.seed),
                System.err),
            json);
      } finally {
        if (workDir == null) {
          io.dynnibal.snapshot.Directories.deleteRecursively(work);
        }
      }
      return 0;
    }
  }
}
