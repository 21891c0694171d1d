package io.dynnibal.sampler;

import io.dynnibal.settings.Setting;
import java.io.Serializable;

/**
 * The sampler settings group: which sampler, and each sampler's own settings (a sampler without
 * settings has no field here).
 */
public final class SamplerSettings implements Serializable {
  private static final long serialVersionUID = 1L;

  @Setting(
      key = "sampler",
      value =
          "negative sampler: in-batch, uniform, stochastic-negative-mining, negative-cache,"
              + " exhaustive, dynnibal-mh, dynnibal-rejection, exact-cache, auto or bm25")
  public String name = Auto.ID;

  public final StochasticNegativeMining.Settings snm = new StochasticNegativeMining.Settings();
  public final NegativeCacheSampler.Settings negativeCache = new NegativeCacheSampler.Settings();
  public final DynnibalMh.Settings mh = new DynnibalMh.Settings();
  public final DynnibalRejection.Settings rejection = new DynnibalRejection.Settings();
  public final Auto.Settings auto = new Auto.Settings();

  /** The chosen sampler, built from these settings (check {@link #problem} first). */
  public Sampler chosen() {
    return Samplers.of(name, this);
  }

  /** What is wrong with the sampler's name, or null. */
  public String problem() {
    return Samplers.NAMES.contains(name)
        ? null
        : "sampler must be one of " + Samplers.NAMES + ", got " + name;
  }
}
