package io.dynnibal.state;

import org.apache.flink.api.common.state.ValueState;

/** Value state on the heap, for unit tests of code written against Flink's state API. */
final class HeapValueState<T> implements ValueState<T> {
  private T value;

  @Override
  public T value() {
    return value;
  }

  @Override
  public void update(T value) {
    this.value = value;
  }

  @Override
  public void clear() {
    value = null;
  }
}
