package io.storageengine.secretstore;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;

/** An in-process secret store for tests and single-process development. Values are copied in and out. */
public final class MemorySecretStore implements SecretStore {
  private final ConcurrentMap<String, Secret> secrets = new ConcurrentHashMap<>();
  private final AtomicLong versions = new AtomicLong();

  @Override
  public Optional<Secret> get(String key) {
    Secret s = secrets.get(SecretKeys.check(key));
    return s == null ? Optional.empty() : Optional.of(new Secret(s.value().clone(), s.version()));
  }

  @Override
  public boolean create(String key, byte[] value) {
    return secrets.putIfAbsent(SecretKeys.check(key), newSecret(value)) == null;
  }

  @Override
  public void put(String key, byte[] value) {
    secrets.put(SecretKeys.check(key), newSecret(value));
  }

  @Override
  public void delete(String key) {
    secrets.remove(SecretKeys.check(key));
  }

  @Override
  public String describe() {
    return "memory";
  }

  private Secret newSecret(byte[] value) {
    Objects.requireNonNull(value, "value");
    return new Secret(value.clone(), "v" + versions.incrementAndGet());
  }
}
