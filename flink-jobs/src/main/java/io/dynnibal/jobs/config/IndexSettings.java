package io.dynnibal.jobs.config;

import io.dynnibal.settings.Setting;
import java.io.Serializable;

/** The index settings group: the Nyström cache's dimension and the SG tree's base. */
public final class IndexSettings implements Serializable {
  private static final long serialVersionUID = 1L;

  @Setting(value = "Nyström landmarks d' (the cache's dimension)", min = 2)
  public int landmarks = 64;

  @Setting(value = "SG tree base (level radius ratio)", min = 1, aboveMin = true)
  public double treeBase = 1.3;
}
