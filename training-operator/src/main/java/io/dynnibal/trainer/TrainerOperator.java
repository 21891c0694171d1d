package io.dynnibal.trainer;

import io.dynnibal.schemas.TrainingMetrics;
import io.dynnibal.stream.MergedBatch;
import java.io.InputStream;
import org.apache.flink.runtime.state.OperatorStateCheckpointOutputStream;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StatePartitionStreamProvider;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.ProcessOperator;

/**
 * Runs the {@link TrainerFunction} and carries its parameters and Adam's moments through
 * checkpoints as raw operator state: streamed into the checkpoint file with bulk writes, no copy on
 * the heap, read back with bulk reads.
 *
 * <p>Why not managed operator state: Flink 2.2 copies a list state's elements on snapshot and
 * serialises them through {@code CompressibleFSDataOutputStream}, which has only a single-byte
 * {@code write}, so a tower's parameters would go through Snappy one byte at a time at every
 * checkpoint, with two copies on the heap. Raw state is part of the checkpoint or savepoint like
 * any other, so Flink still owns its lifetime.
 */
public final class TrainerOperator extends ProcessOperator<MergedBatch, TrainingMetrics> {
  private static final long serialVersionUID = 1L;

  public TrainerOperator(TrainerSettings settings, FaultInjection faults) {
    super(new TrainerFunction(settings, faults));
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    TrainerFunction trainer = (TrainerFunction) userFunction;
    for (StatePartitionStreamProvider partition : context.getRawOperatorStateInputs()) {
      try (InputStream in = partition.getStream()) {
        trainer.restoreParameters(in);
      }
    }
    super.initializeState(context);
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    OperatorStateCheckpointOutputStream out = context.getRawOperatorStateOutput();
    out.startNewPartition();
    ((TrainerFunction) userFunction).writeParameters(out);
  }
}
