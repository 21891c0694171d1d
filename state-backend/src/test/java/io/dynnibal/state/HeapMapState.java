package io.dynnibal.state;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.flink.api.common.state.MapState;

/**
 * Map state on the heap, for unit tests of code written against Flink's state API. Like RocksDB, it
 * hands out and keeps copies (given a copier), so a value changed but not written back is not
 * changed in the state.
 */
final class HeapMapState<K, V> implements MapState<K, V> {
  private final Map<K, V> map = new LinkedHashMap<>();
  private final UnaryOperator<V> copy;

  /** Keeps the values themselves (for immutable values). */
  HeapMapState() {
    this(v -> v);
  }

  HeapMapState(UnaryOperator<V> copy) {
    this.copy = copy;
  }

  @Override
  public V get(K key) {
    V v = map.get(key);
    return v == null ? null : copy.apply(v);
  }

  @Override
  public void put(K key, V value) {
    map.put(key, copy.apply(value));
  }

  @Override
  public void putAll(Map<K, V> values) {
    values.forEach(this::put);
  }

  @Override
  public void remove(K key) {
    map.remove(key);
  }

  @Override
  public boolean contains(K key) {
    return map.containsKey(key);
  }

  @Override
  public Iterable<Map.Entry<K, V>> entries() {
    List<Map.Entry<K, V>> out = new ArrayList<>();
    for (K key : new ArrayList<>(map.keySet())) {
      out.add(
          new Map.Entry<>() {
            private V value = get(key);

            @Override
            public K getKey() {
              return key;
            }

            @Override
            public V getValue() {
              return value;
            }

            @Override
            public V setValue(V v) {
              V old = value;
              value = v;
              put(key, v);
              return old;
            }
          });
    }
    return out;
  }

  @Override
  public Iterable<K> keys() {
    return new ArrayList<>(map.keySet());
  }

  @Override
  public Iterable<V> values() {
    List<V> out = new ArrayList<>();
    for (V v : map.values()) {
      out.add(copy.apply(v));
    }
    return out;
  }

  @Override
  public Iterator<Map.Entry<K, V>> iterator() {
    return entries().iterator();
  }

  @Override
  public boolean isEmpty() {
    return map.isEmpty();
  }

  @Override
  public void clear() {
    map.clear();
  }
}
