package io.storageengine.server;

import io.storageengine.common.config.Setting;
import io.storageengine.ingest.IngestConfig;
import java.util.List;

/**
 * The settings the server itself declares (listener, cluster storage, secret store, loop
 * intervals, roles), plus the ingestion settings the composition root and tests name directly.
 * The settings of the other modules live next to their config records ({@link
 * ServerConfig#SETTINGS} lists them all). A flag wins over the environment, the environment over
 * the default.
 */
public enum ConfigKey {
  SERVER_ADDRESS(Setting.hostPort("server.address", "127.0.0.1:7777", "host:port of the one listener (HTTP and gRPC)")),
  SERVER_WARMUP_STREAMS(Setting.integer("server.warmup-streams", "500", 0, "ingest streams se dev and se start server run into a private in-memory table before they listen, so the first clients meet compiled code (0: none)")),
  DATA_DIR(Setting.string("data-dir", ".se", "DIR", "directory of the fs object store when --object-store.root is not set")),
  OBJECT_STORE_TYPE(Setting.oneOf("object-store.type", "fs", List.of("fs", "s3", "memory"), "cluster storage backend: fs, s3 or memory")),
  OBJECT_STORE_ROOT(Setting.string("object-store.root", "", "DIR", "fs: root directory (default: --data-dir)")),
  OBJECT_STORE_BUCKET(Setting.string("object-store.bucket", "", "BUCKET", "s3: bucket name")),
  OBJECT_STORE_PREFIX(Setting.string("object-store.prefix", "", "PREFIX", "s3: key prefix inside the bucket")),
  OBJECT_STORE_ENDPOINT(Setting.string("object-store.endpoint", "", "URL", "s3: endpoint of an S3-compatible store (AWS_* variables give credentials and region)")),
  OBJECT_STORE_REGION(Setting.string("object-store.region", "", "REGION", "s3: region (default: AWS_REGION, else us-east-1)")),
  SECRET_STORE_TYPE(Setting.oneOf("secret-store.type", "file", List.of("file", "memory", "aws-sm", "azure-kv", "gcp-sm", "vault"), "where catalog configs live: file (encrypted, on cluster storage), memory, aws-sm, azure-kv, gcp-sm or vault")),
  SECRET_STORE_KEY(Setting.string("secret-store.key", "", "KEY", "file: the encryption key, 64 hex digits or base64 of 32 bytes (prefer the environment variable)")),
  SECRET_STORE_FILE_KEY_FILE(Setting.string("secret-store.file.key-file", "", "FILE", "file: a file holding the key (default: <data-dir>/secret-store.key when it exists; se dev generates it)")),
  SECRET_STORE_AWS_SM_REGION(Setting.string("secret-store.aws-sm.region", "", "REGION", "aws-sm: region (default: the AWS SDK chain, AWS_REGION)")),
  SECRET_STORE_AWS_SM_ENDPOINT(Setting.string("secret-store.aws-sm.endpoint", "", "URL", "aws-sm: endpoint override (VPC endpoint, tests)")),
  SECRET_STORE_AWS_SM_PREFIX(Setting.string("secret-store.aws-sm.prefix", "storage-engine/", "PREFIX", "aws-sm: name prefix of the engine's secrets")),
  SECRET_STORE_AZURE_KV_VAULT_URL(Setting.string("secret-store.azure-kv.vault-url", "", "URL", "azure-kv: vault URL, e.g. https://my-vault.vault.azure.net")),
  SECRET_STORE_AZURE_KV_TENANT_ID(Setting.string("secret-store.azure-kv.tenant-id", "", "ID", "azure-kv: Entra tenant of the service principal (with client id and secret)")),
  SECRET_STORE_AZURE_KV_CLIENT_ID(Setting.string("secret-store.azure-kv.client-id", "", "ID", "azure-kv: client id of the service principal, or of a user-assigned managed identity without a secret")),
  SECRET_STORE_AZURE_KV_CLIENT_SECRET(Setting.string("secret-store.azure-kv.client-secret", "", "SECRET", "azure-kv: client secret of the service principal (prefer the environment variable)")),
  SECRET_STORE_AZURE_KV_ACCESS_TOKEN(Setting.string("secret-store.azure-kv.access-token", "", "TOKEN", "azure-kv: a fixed bearer token for Key Vault instead (prefer the environment variable)")),
  SECRET_STORE_AZURE_KV_PREFIX(Setting.string("secret-store.azure-kv.prefix", "storage-engine-", "PREFIX", "azure-kv: name prefix of the engine's secrets ([0-9a-zA-Z-])")),
  SECRET_STORE_GCP_SM_PROJECT(Setting.string("secret-store.gcp-sm.project", "", "PROJECT", "gcp-sm: project id holding the secrets")),
  SECRET_STORE_GCP_SM_CREDENTIALS_FILE(Setting.string("secret-store.gcp-sm.credentials-file", "", "FILE", "gcp-sm: service-account JSON key file (default: Application Default Credentials)")),
  SECRET_STORE_GCP_SM_ACCESS_TOKEN(Setting.string("secret-store.gcp-sm.access-token", "", "TOKEN", "gcp-sm: a fixed OAuth access token instead (prefer the environment variable)")),
  SECRET_STORE_GCP_SM_ENDPOINT(Setting.string("secret-store.gcp-sm.endpoint", "", "HOST:PORT", "gcp-sm: endpoint override (private endpoint; http://host:port for a plaintext emulator)")),
  SECRET_STORE_GCP_SM_PREFIX(Setting.string("secret-store.gcp-sm.prefix", "storage-engine-", "PREFIX", "gcp-sm: id prefix of the engine's secrets ([a-zA-Z0-9_-])")),
  SECRET_STORE_VAULT_ADDRESS(Setting.string("secret-store.vault.address", "", "URL", "vault: server URL, e.g. https://vault.example:8200")),
  SECRET_STORE_VAULT_TOKEN(Setting.string("secret-store.vault.token", "", "TOKEN", "vault: token (prefer the environment variable)")),
  SECRET_STORE_VAULT_NAMESPACE(Setting.string("secret-store.vault.namespace", "", "NS", "vault: namespace (Vault Enterprise / HCP)")),
  SECRET_STORE_VAULT_MOUNT(Setting.string("secret-store.vault.mount", "secret", "MOUNT", "vault: mount path of the KV v2 engine")),
  SECRET_STORE_VAULT_PREFIX(Setting.string("secret-store.vault.prefix", "storage-engine/", "PREFIX", "vault: path prefix of the engine's secrets")),
  INGEST_FLUSH_INTERVAL(IngestConfig.FLUSH_INTERVAL),
  INGEST_FLUSH_BYTES(IngestConfig.FLUSH_BYTES),
  INGEST_MEMORY_LIMIT(IngestConfig.MEMORY_LIMIT),
  RECONCILE_INTERVAL(Setting.duration("reconcile.interval", "1s", "how often se dev and se reconcile --watch look for WAL to publish")),
  RECONCILE_ADMISSION_DEFERRAL(Setting.duration("reconcile.admission-deferral", "1s", "se dev: longest a reconcile pass waits while a burst of ingest streams is being admitted (0: passes never wait)")),
  MAINTENANCE_INTERVAL(Setting.duration("maintenance.interval", "30s", "how often se dev maintains every table; a worker schedules a table's maintenance at most this often")),
  DEFAULT_CATALOG(Setting.string("dev.catalog", "warehouse", "ID", "se dev: the embedded catalog created on first start")),
  REST_PLAN_PAGE_SIZE(Setting.integer("rest.plan-page-size", "1000", 1, "Iceberg REST scan planning: file scan tasks per response; larger plans continue in plan tasks")),
  /** Only {@code se start lb} has the flag ({@code --probe-interval}, as before, or the derived one). */
  LB_PROBE_INTERVAL(Setting.duration("lb.probe-interval", "500ms", "se start lb: how often each server's /health is probed")
      .withAliases("--probe-interval")),
  /** Only {@code se start worker} has the flag ({@code --concurrency}, as before, or the derived one). */
  WORKER_CONCURRENCY(Setting.integer("worker.concurrency", "2", 1, "se start worker: tasks run at once")
      .withAliases("--concurrency"));

  private final Setting<?> setting;

  ConfigKey(Setting<?> setting) {
    this.setting = setting;
  }

  /** The typed setting behind this key. */
  public Setting<?> setting() {
    return setting;
  }

  /** The flag name without dashes, e.g. {@code server.address}. */
  public String flag() {
    return setting.key();
  }

  /** {@code SE_} + the flag upper-cased with dots and dashes as underscores. */
  public String environmentVariable() {
    return setting.environmentVariable();
  }

  public String defaultValue() {
    return setting.defaultValue();
  }

  public String description() {
    return setting.description();
  }

  public static ConfigKey fromFlag(String flag) {
    for (ConfigKey k : values()) {
      if (k.flag().equals(flag)) {
        return k;
      }
    }
    throw new IllegalArgumentException("unknown option --" + flag);
  }
}
