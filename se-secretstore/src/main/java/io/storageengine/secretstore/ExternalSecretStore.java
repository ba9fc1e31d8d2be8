package io.storageengine.secretstore;

import java.util.Optional;

/**
 * A secret store that is a managed service (AWS Secrets Manager, Azure Key Vault, GCP Secret
 * Manager, Vault). Besides the engine's own keys (mapped to names the service allows, under a
 * configurable prefix), it can read a secret an operator put there by its native name: what a
 * catalog's {@code secret-ref:} property points to (see {@link SecretReference}).
 */
public interface ExternalSecretStore extends SecretStore {

  /**
   * The current value of the service's secret {@code name} exactly as the service names it (no
   * prefix, no key mapping), or empty when there is none. A text secret is returned as its UTF-8
   * bytes. Failures are UNAVAILABLE; messages name the secret, never its value.
   */
  Optional<byte[]> readReference(String name);
}
