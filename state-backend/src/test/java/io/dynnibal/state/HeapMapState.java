package io.dynnibal.state;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.api.common.state.MapState;

/** Map state on the heap, for unit tests of code written against Flink's state API. */
final class HeapMapState<K, V> implements MapState<K, V> {
  private final Map<K, V> map = new LinkedHashMap<>();

  @Override
  public V get(K key) {
    return map.get(key);
  }

  @Override
  public void put(K key, V value) {
    map.put(key, value);
  }

  @Override
  public void putAll(Map<K, V> values) {
    map.putAll(values);
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
    return map.entrySet();
  }

  @Override
  public Iterable<K> keys() {
    return map.keySet();
  }

  @Override
  public Iterable<V> values() {
    return map.values();
  }

  @Override
  public Iterator<Map.Entry<K, V>> iterator() {
    return map.entrySet().iterator();
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
