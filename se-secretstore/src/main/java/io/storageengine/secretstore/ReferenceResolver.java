package io.storageengine.secretstore;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Resolves {@link SecretReference}s by opening, on first use, the external store the reference
 * names from the server's {@link SecretStoreOptions} (region, address, token of that store type),
 * and keeping it open until {@link #close}. A store that cannot be configured from the options is
 * INVALID_ARGUMENT saying which option is missing.
 */
public final class ReferenceResolver implements SecretResolver, AutoCloseable {
  private final SecretStoreOptions options;
  private final Map<String, ExternalSecretStore> open = new ConcurrentHashMap<>();

  public ReferenceResolver(SecretStoreOptions options) {
    this.options = Objects.requireNonNull(options, "options");
  }

  /** A resolver reading through {@code stores} only (tests, or stores built elsewhere). */
  public static ReferenceResolver of(Map<String, ExternalSecretStore> stores) {
    ReferenceResolver r = new ReferenceResolver(new SecretStoreOptions("memory", Map.of()));
    r.open.putAll(stores);
    return r;
  }

  @Override
  public String resolve(SecretReference reference) {
    ExternalSecretStore store = open.get(reference.store());
    if (store == null) {
      synchronized (open) {
        store = open.computeIfAbsent(reference.store(), options::openExternal);
      }
    }
    ExternalSecretStore from = store;
    byte[] value = from.readReference(reference.name())
        .orElseThrow(() -> new SeException(ErrorCode.INVALID_ARGUMENT,
            "secret reference " + reference + ": no such secret in " + from.describe()));
    return new String(value, UTF_8);
  }

  @Override
  public void close() {
    open.values().forEach(SecretStore::close);
    open.clear();
  }
}
