package io.storageengine.secretstore;

import io.storageengine.common.SeException;
import java.net.URI;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Everything needed to open a secret store: its type and the per-type options, keyed by the
 * option names of the server configuration without the {@code secret-store.} prefix
 * ({@code aws-sm.region}, {@code vault.token}, ...). Blank values mean "not set".
 */
public record SecretStoreOptions(String type, Map<String, String> options) {
  /** The types {@code --secret-store.type} accepts. */
  public static final Set<String> TYPES = Set.of("file", "memory", "aws-sm", "azure-kv", "gcp-sm", "vault");

  public SecretStoreOptions {
    Objects.requireNonNull(type, "type");
    if (!TYPES.contains(type)) {
      throw SeException.invalid("--secret-store.type: expected file, memory, aws-sm, azure-kv, gcp-sm or vault, got '%s'", type);
    }
    options = Map.copyOf(options);
  }

  @Override
  public String toString() {
    // Options hold tokens and keys: print only which are set.
    return "SecretStoreOptions[type=" + type + ", set=" + new java.util.TreeSet<>(options.entrySet().stream()
        .filter(e -> e.getValue() != null && !e.getValue().isBlank()).map(Map.Entry::getKey).toList()) + "]";
  }

  public String option(String name) {
    String v = options.get(name);
    return v == null || v.isBlank() ? null : v.strip();
  }

  /** Opens an external store of {@code storeType} ({@code aws-sm}, {@code azure-kv}, {@code gcp-sm}, {@code vault}) from these options. */
  public ExternalSecretStore openExternal(String storeType) {
    return switch (storeType) {
      case "aws-sm" -> AwsSecretsManagerStore.open(option("aws-sm.region"), option("aws-sm.endpoint"),
          options.containsKey("aws-sm.prefix") ? options.get("aws-sm.prefix").strip() : null);
      case "azure-kv" -> AzureKeyVaultStore.open(new AzureKeyVaultStore.Options(option("azure-kv.vault-url"),
          option("azure-kv.tenant-id"), option("azure-kv.client-id"), option("azure-kv.client-secret"),
          option("azure-kv.access-token"), prefix("azure-kv.prefix")));
      case "gcp-sm" -> GcpSecretManagerStore.open(new GcpSecretManagerStore.Options(option("gcp-sm.project"),
          option("gcp-sm.credentials-file"), option("gcp-sm.access-token"), option("gcp-sm.endpoint"),
          prefix("gcp-sm.prefix")));
      case "vault" -> {
        String address = option("vault.address");
        if (address == null) {
          throw SeException.invalid("vault secret store: no address; set --secret-store.vault.address or "
              + "SE_SECRET_STORE_VAULT_ADDRESS (e.g. https://vault.example:8200)");
        }
        URI uri;
        try {
          uri = URI.create(address);
        } catch (IllegalArgumentException e) {
          throw SeException.invalid("--secret-store.vault.address: expected an http(s) URL, got '%s'", address);
        }
        yield new VaultSecretStore(uri, option("vault.token"), option("vault.namespace"), option("vault.mount"),
            options.containsKey("vault.prefix") ? options.get("vault.prefix").strip() : null);
      }
      default -> throw SeException.invalid("secret store type '%s' has no references; use aws-sm, azure-kv, gcp-sm or vault", storeType);
    };
  }

  /** A prefix option: null when not given at all (the store's default), else as given (may be empty). */
  private String prefix(String name) {
    return options.containsKey(name) && options.get(name) != null ? options.get(name).strip() : null;
  }
}
