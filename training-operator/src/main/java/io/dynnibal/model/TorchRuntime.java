package io.dynnibal.model;

import ai.djl.Device;
import ai.djl.engine.Engine;
import ai.djl.engine.EngineException;

/**
 * The one way into DJL's PyTorch engine. It fixes the JVM-wide defaults before libtorch loads,
 * because they are read once at load time:
 *
 * <ul>
 *   <li>{@code ai.djl.offline=true}: libtorch comes from the native jar on the classpath, never
 *       from the network (none here; a download attempt fails the run).
 *   <li>one intra-op and one inter-op thread: the operators share the machine's cores, and
 *       PyTorch's default thread pools, one thread per core each, spin against them (OpenMP). GPU
 *       work is unaffected.
 * </ul>
 *
 * A value the user set with {@code -D...} always wins.
 */
public final class TorchRuntime {
  public static final String ENGINE_NAME = "PyTorch";

  private TorchRuntime() {}

  /** The PyTorch engine, loaded on first use with the defaults above. */
  public static Engine engine() {
    setIfAbsent("ai.djl.offline", "true");
    setIfAbsent("ai.djl.pytorch.num_threads", "1");
    setIfAbsent("ai.djl.pytorch.num_interop_threads", "1");
    try {
      return Engine.getEngine(ENGINE_NAME);
    } catch (EngineException e) {
      // DJL's own message ("Failed to save pytorch index file") hides the usual cause: it found no
      // libtorch on the classpath that fits this machine and, being offline, could not download
      // one.
      throw new IllegalStateException(
          "libtorch could not be loaded. A CPU build needs ai.djl.pytorch:pytorch-native-cpu on the classpath;"
              + " a CUDA build (-Pcuda) loads only where a GPU and a driver for its CUDA version are visible -"
              + " build without -Pcuda on machines without one. DJL said: "
              + e.getMessage(),
          e);
    }
  }

  /**
   * Turns libtorch's autograd recording off for the calling thread. Grad mode is thread-local in
   * libtorch and on by default; DJL switches it off only on the thread that loaded the engine, and
   * a {@code GradientCollector} restores whatever it found. On any other thread (a Flink task's)
   * inference would record graphs it never uses, and in-place optimiser updates of parameters fail
   * ("a leaf Variable that requires grad is being used in an in-place operation"). Cheap; call it
   * before inference and before optimiser updates.
   */
  public static void noGradOnThisThread() {
    engine();
    ai.djl.pytorch.jni.JniUtils.setGradMode(false);
  }

  /**
   * Sets libtorch's intra-op threads for the whole process, for a caller that has the machine to
   * itself (the trainer alone, evaluation after training); returns the previous count so that it
   * can be put back.
   */
  public static int useIntraOpThreads(int threads) {
    engine();
    int previous = ai.djl.pytorch.jni.JniUtils.getNumThreads();
    ai.djl.pytorch.jni.JniUtils.setNumThreads(Math.max(1, threads));
    return previous;
  }

  /** GPU 0 when libtorch sees a CUDA device, else the CPU. */
  public static Device trainingDevice() {
    return cudaAvailable() ? Device.gpu() : Device.cpu();
  }

  /**
   * Whether libtorch can use a CUDA device ({@code torch::cuda::is_available}). DJL's own GPU count
   * asks the CUDA runtime through JNA as well and reads 0 where JNA finds no {@code libcudart} on
   * its path, as with a pip install of torch, whose runtime lives beside torch's libraries.
   */
  public static boolean cudaAvailable() {
    Engine engine = engine();
    return engine.hasCapability(ai.djl.engine.StandardCapabilities.CUDA)
        || engine.getGpuCount() > 0;
  }

  /**
   * What `dynnibal version` reports. Loads libtorch (about 0.5 s warm, a few seconds on first
   * unpack).
   */
  public static Description describe() {
    Engine engine = engine();
    return new Description(
        Engine.getDjlVersion(),
        engine.getVersion(),
        Math.max(engine.getGpuCount(), cudaAvailable() ? 1 : 0),
        trainingDevice());
  }

  private static void setIfAbsent(String key, String value) {
    if (System.getProperty(key) == null) {
      System.setProperty(key, value);
    }
  }

  /** Versions of DJL and libtorch, and the device training will use. */
  public record Description(
      String djlVersion, String libtorchVersion, int gpuCount, Device trainingDevice) {}
}
