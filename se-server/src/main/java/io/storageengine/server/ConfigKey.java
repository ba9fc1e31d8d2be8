package io.storageengine.server;

import java.util.Locale;

/**
 * Every configuration option, in one place: its flag ({@code --server.address}), its environment
 * variable ({@code SE_SERVER_ADDRESS}), its default and what it means. A flag wins over the
 * environment, the environment over the default.
 */
public enum ConfigKey {
  SERVER_ADDRESS("server.address", "127.0.0.1:7777", "host:port of the one listener (HTTP and gRPC)"),
  DATA_DIR("data-dir", ".se", "directory of the fs object store when --object-store.root is not set"),
  OBJECT_STORE_TYPE("object-store.type", "fs", "cluster storage backend: fs, s3 or memory"),
  OBJECT_STORE_ROOT("object-store.root", "", "fs: root directory (default: --data-dir)"),
  OBJECT_STORE_BUCKET("object-store.bucket", "", "s3: bucket name"),
  OBJECT_STORE_PREFIX("object-store.prefix", "", "s3: key prefix inside the bucket"),
  OBJECT_STORE_ENDPOINT("object-store.endpoint", "", "s3: endpoint of an S3-compatible store (AWS_* variables give credentials and region)"),
  OBJECT_STORE_REGION("object-store.region", "", "s3: region (default: AWS_REGION, else us-east-1)"),
  SECRET_STORE_TYPE("secret-store.type", "file", "where catalog configs live: file (encrypted, on cluster storage), memory, aws-sm or vault"),
  SECRET_STORE_KEY("secret-store.key", "", "file: the encryption key, 64 hex digits or base64 of 32 bytes (prefer the environment variable)"),
  SECRET_STORE_FILE_KEY_FILE("secret-store.file.key-file", "", "file: a file holding the key (default: <data-dir>/secret-store.key when it exists; se dev generates it)"),
  SECRET_STORE_AWS_SM_REGION("secret-store.aws-sm.region", "", "aws-sm: region (default: the AWS SDK chain, AWS_REGION)"),
  SECRET_STORE_AWS_SM_ENDPOINT("secret-store.aws-sm.endpoint", "", "aws-sm: endpoint override (VPC endpoint, tests)"),
  SECRET_STORE_AWS_SM_PREFIX("secret-store.aws-sm.prefix", "storage-engine/", "aws-sm: name prefix of the engine's secrets"),
  SECRET_STORE_VAULT_ADDRESS("secret-store.vault.address", "", "vault: server URL, e.g. https://vault.example:8200"),
  SECRET_STORE_VAULT_TOKEN("secret-store.vault.token", "", "vault: token (prefer the environment variable)"),
  SECRET_STORE_VAULT_NAMESPACE("secret-store.vault.namespace", "", "vault: namespace (Vault Enterprise / HCP)"),
  SECRET_STORE_VAULT_MOUNT("secret-store.vault.mount", "secret", "vault: mount path of the KV v2 engine"),
  SECRET_STORE_VAULT_PREFIX("secret-store.vault.prefix", "storage-engine/", "vault: path prefix of the engine's secrets"),
  INGEST_FLUSH_INTERVAL("ingest.flush-interval", "1s", "group-commit window per table (e.g. 200ms, 1s)"),
  INGEST_FLUSH_BYTES("ingest.flush-bytes", "64MiB", "group-commit size threshold per table"),
  INGEST_MEMORY_LIMIT("ingest.memory-limit", "1GiB", "global budget of unacknowledged ingest bytes"),
  RECONCILE_INTERVAL("reconcile.interval", "1s", "how often se dev looks for WAL to publish"),
  MAINTENANCE_INTERVAL("maintenance.interval", "30s", "how often se dev maintains every table"),
  DEFAULT_CATALOG("dev.catalog", "warehouse", "se dev: the embedded catalog created on first start");

  private final String flag;
  private final String defaultValue;
  private final String description;

  ConfigKey(String flag, String defaultValue, String description) {
    this.flag = flag;
    this.defaultValue = defaultValue;
    this.description = description;
  }

  /** The flag name without dashes, e.g. {@code server.address}. */
  public String flag() {
    return flag;
  }

  /** {@code SE_} + the flag upper-cased with dots and dashes as underscores. */
  public String environmentVariable() {
    return "SE_" + flag.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
  }

  public String defaultValue() {
    return defaultValue;
  }

  public String description() {
    return description;
  }

  public static ConfigKey fromFlag(String flag) {
    for (ConfigKey k : values()) {
      if (k.flag.equals(flag)) {
        return k;
      }
    }
    throw new IllegalArgumentException("unknown option --" + flag);
  }
}
