package io.storageengine.auth;

import io.storageengine.secretstore.MemorySecretStore;
import io.storageengine.secretstore.SecretStore;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A memory secret store that also keeps every value ever written, by key, so a test can search the
 * raw contents (the store interface itself cannot list).
 */
final class RecordingSecretStore implements SecretStore {
  private final MemorySecretStore delegate = new MemorySecretStore();
  private final Map<String, StringBuilder> written = new ConcurrentHashMap<>();
  private final Map<String, Integer> reads = new ConcurrentHashMap<>();

  @Override
  public Optional<Secret> get(String key) {
    reads.merge(key, 1, Integer::sum);
    return delegate.get(key);
  }

  @Override
  public boolean create(String key, byte[] value) {
    boolean created = delegate.create(key, value);
    if (created) {
      record(key, value);
    }
    return created;
  }

  @Override
  public void put(String key, byte[] value) {
    delegate.put(key, value);
    record(key, value);
  }

  @Override
  public void delete(String key) {
    delegate.delete(key);
  }

  @Override
  public String describe() {
    return "recording";
  }

  /** Every key and value ever written, as one text. */
  String everythingWritten() {
    StringBuilder all = new StringBuilder();
    written.forEach((key, values) -> all.append(key).append('\n').append(values).append('\n'));
    return all.toString();
  }

  /** How often {@code key} was read. */
  int reads(String keyPrefix) {
    return reads.entrySet().stream().filter(e -> e.getKey().startsWith(keyPrefix)).mapToInt(Map.Entry::getValue)
        .sum();
  }

  private void record(String key, byte[] value) {
    written.computeIfAbsent(key, k -> new StringBuilder()).append(new String(value, StandardCharsets.UTF_8))
        .append('\n');
  }
}
