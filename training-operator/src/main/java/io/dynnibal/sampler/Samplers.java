package io.dynnibal.sampler;

import java.util.List;
import java.util.function.Function;

/** Every sampler by name: the one list the {@code sampler} setting chooses from. */
public final class Samplers {

  /** A sampler's name and how it is built from the sampler settings. */
  private record Registration(String id, Function<SamplerSettings, Sampler> build) {}

  private static final List<Registration> ALL =
      List.of(
          new Registration(InBatch.ID, s -> new InBatch()),
          new Registration(Uniform.ID, s -> new Uniform()),
          new Registration(StochasticNegativeMining.ID, StochasticNegativeMining::of),
          new Registration(NegativeCacheSampler.ID, NegativeCacheSampler::of),
          new Registration(Exhaustive.ID, s -> new Exhaustive()),
          new Registration(DynnibalMh.ID, DynnibalMh::of),
          new Registration(DynnibalRejection.ID, DynnibalRejection::of),
          new Registration(ExactCache.ID, s -> new ExactCache()),
          new Registration(Auto.ID, Auto::of),
          new Registration(Bm25Negatives.ID, s -> new Bm25Negatives()));

  /** Every sampler's name, in the order of the paper's comparison. */
  public static final List<String> NAMES = ALL.stream().map(Registration::id).toList();

  private Samplers() {}

  /** The sampler named {@code id}, built from {@code settings}. */
  public static Sampler of(String id, SamplerSettings settings) {
    for (Registration r : ALL) {
      if (r.id.equals(id)) {
        return r.build.apply(settings);
      }
    }
    throw new IllegalArgumentException("unknown sampler \"" + id + "\"; one of " + NAMES);
  }

  /** The sampler named {@code id} at its default settings. */
  public static Sampler of(String id) {
    return of(id, new SamplerSettings());
  }

  /** The samplers {@code ./dynnibal experiment} compares when none are named. */
  public static List<String> comparedByDefault() {
    return NAMES.stream().filter(id -> of(id).comparedByDefault()).toList();
  }
}
