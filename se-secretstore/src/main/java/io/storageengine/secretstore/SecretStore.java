package io.storageengine.secretstore;

import java.util.Optional;

/**
 * A small key-value store for secrets (catalog configs holding upstream credentials).
 *
 * <p>Semantics every backend guarantees:
 * <ul>
 *   <li>Keys are slash-separated lowercase paths ({@code catalog/example}); see {@link SecretKeys}.
 *       An invalid key is {@code SeException(INVALID_ARGUMENT)}.</li>
 *   <li>Every successful write gives the key a new {@link Secret#version()}, distinct from every
 *       earlier version of that key, so a reader can tell that a value changed by comparing
 *       versions (even when the same bytes were written again).</li>
 *   <li>{@link #create} is atomic: of N concurrent callers on one key exactly one returns true.
 *       Exception: {@link AzureKeyVaultStore} (Key Vault has no conditional write) guarantees this
 *       only among the callers of one process.</li>
 *   <li>Writes are visible to every later {@link #get} from any process sharing the store.</li>
 *   <li>Failures of the underlying storage are {@code SeException(UNAVAILABLE)}; messages never
 *       contain secret values.</li>
 *   <li>There is deliberately no listing: a secret can only be read by someone who knows its key.</li>
 * </ul>
 */
public interface SecretStore extends AutoCloseable {

  /** The value and version stored under {@code key}, or empty when there is none. */
  Optional<Secret> get(String key);

  /** Stores {@code value} only if {@code key} is absent: true if created, false if it existed. */
  boolean create(String key, byte[] value);

  /** Creates or replaces the value under {@code key}. */
  void put(String key, byte[] value);

  /** Removes {@code key}; removing an absent key succeeds (idempotent). */
  void delete(String key);

  /** A short description for logs ({@code file:fs:/data/secrets}, {@code memory}); no secrets. */
  String describe();

  @Override
  default void close() {}

  /**
   * A stored value and its opaque version, which changes on every write of the key.
   *
   * <p>{@code value} is the caller's own copy.
   */
  record Secret(byte[] value, String version) {
    @Override
    public String toString() {
      // Never print the value: records end up in log lines.
      return "Secret[version=" + version + ", " + value.length + " bytes]";
    }
  }
}
