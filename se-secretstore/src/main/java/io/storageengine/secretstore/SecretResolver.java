package io.storageengine.secretstore;

/** Reads the secret a {@link SecretReference} points to. */
@FunctionalInterface
public interface SecretResolver {

  /** Refuses every reference: for deployments with no external store configured. */
  SecretResolver NONE = ref -> {
    throw new io.storageengine.common.SeException(io.storageengine.common.ErrorCode.INVALID_ARGUMENT,
        "secret reference " + ref + ": no " + ref.store() + " secret store is configured on this server "
            + "(see --secret-store.* options)");
  };

  /**
   * The referenced value as text. INVALID_ARGUMENT when the store is not configured or the secret
   * does not exist (naming the reference), UNAVAILABLE when the store cannot be reached.
   */
  String resolve(SecretReference reference);
}
