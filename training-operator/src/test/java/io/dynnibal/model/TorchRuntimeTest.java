package io.dynnibal.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import ai.djl.util.Pair;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * libtorch loads offline from the native jar, and real gradients with Adam move real parameters.
 */
class TorchRuntimeTest {

  @Test
  void libtorchLoadsOfflineFromTheNativeJar() {
    TorchRuntime.Description runtime = TorchRuntime.describe();
    assertEquals("true", System.getProperty("ai.djl.offline"));
    assertTrue(
        runtime.libtorchVersion().matches("\\d+\\.\\d+\\.\\d+.*"), runtime.libtorchVersion());
    assertFalse(runtime.djlVersion().isBlank());
  }

  @Test
  void theCpuIsUsedWhenNoGpuIsVisible() {
    TorchRuntime.Description runtime = TorchRuntime.describe();
    if (runtime.gpuCount() == 0) {
      assertEquals(Device.cpu(), runtime.trainingDevice());
    } else {
      assertTrue(
          runtime.trainingDevice().isGpu(),
          "a GPU is visible but training would use " + runtime.trainingDevice());
    }
    assertEquals("1", System.getProperty("ai.djl.pytorch.num_threads"));
  }

  @Test
  void oneAdamStepChangesEveryParameter() {
    try (Model model = newModel();
        Trainer trainer = newTrainer(model)) {
      NDManager manager = trainer.getManager();
      NDArray x = manager.randomNormal(new Shape(32, 4));
      NDArray y = x.sum(new int[] {1}, true).mul(2f);
      List<float[]> before = parameters(model.getBlock());
      trainOneStep(trainer, x, y);
      List<float[]> after = parameters(model.getBlock());
      for (int i = 0; i < before.size(); i++) {
        assertFalse(
            java.util.Arrays.equals(before.get(i), after.get(i)),
            "parameter " + i + " did not move");
      }
    }
  }

  @Test
  void repeatedStepsFitALinearTarget() {
    try (Model model = newModel();
        Trainer trainer = newTrainer(model)) {
      NDManager manager = trainer.getManager();
      NDArray x = manager.randomNormal(new Shape(64, 4));
      NDArray y = x.sum(new int[] {1}, true).mul(2f);
      float first = trainOneStep(trainer, x, y);
      float last = first;
      for (int step = 0; step < 300; step++) {
        last = trainOneStep(trainer, x, y);
      }
      assertTrue(last < first / 20, "loss " + first + " -> " + last);
    }
  }

  private static Model newModel() {
    TorchRuntime.engine().setRandomSeed(7);
    Model model =
        Model.newInstance("smoke", TorchRuntime.trainingDevice(), TorchRuntime.ENGINE_NAME);
    Block block =
        new SequentialBlock()
            .add(Linear.builder().setUnits(16).build())
            .add(Activation::relu)
            .add(Linear.builder().setUnits(1).build());
    model.setBlock(block);
    return model;
  }

  private static Trainer newTrainer(Model model) {
    DefaultTrainingConfig config =
        new DefaultTrainingConfig(Loss.l2Loss())
            .optOptimizer(Optimizer.adam().optLearningRateTracker(Tracker.fixed(0.01f)).build())
            .optDevices(new Device[] {TorchRuntime.trainingDevice()});
    Trainer trainer = model.newTrainer(config);
    trainer.initialize(new Shape(1, 4));
    return trainer;
  }

  private static float trainOneStep(Trainer trainer, NDArray x, NDArray y) {
    try (GradientCollector collector = trainer.newGradientCollector()) {
      NDArray prediction = trainer.forward(new NDList(x)).singletonOrThrow();
      NDArray loss = trainer.getLoss().evaluate(new NDList(y), new NDList(prediction));
      collector.backward(loss);
      trainer.step();
      return loss.getFloat();
    }
  }

  private static List<float[]> parameters(Block block) {
    List<float[]> values = new ArrayList<>();
    for (Pair<String, ai.djl.nn.Parameter> p : block.getParameters()) {
      values.add(p.getValue().getArray().toFloatArray());
    }
    return values;
  }
}
