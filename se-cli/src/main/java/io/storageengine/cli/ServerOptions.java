package io.storageengine.cli;

import io.storageengine.server.ConfigKey;
import io.storageengine.server.ServerConfig;
import java.util.EnumMap;
import java.util.Map;
import picocli.CommandLine.Option;

/** The configuration flags of section 12, shared by the commands that run engine roles. */
public final class ServerOptions {
  @Option(names = "--server.address", paramLabel = "HOST:PORT", description = "Listener for HTTP and gRPC (env SE_SERVER_ADDRESS, default 127.0.0.1:7777).")
  String serverAddress;

  @Option(names = "--data-dir", paramLabel = "DIR", description = "Where the fs object store keeps its data (env SE_DATA_DIR, default ./.se).")
  String dataDir;

  @Option(names = "--object-store.type", paramLabel = "TYPE", description = "fs, s3 or memory (env SE_OBJECT_STORE_TYPE, default fs).")
  String objectStoreType;

  @Option(names = "--object-store.root", paramLabel = "DIR", description = "fs: root directory (env SE_OBJECT_STORE_ROOT, default --data-dir).")
  String objectStoreRoot;

  @Option(names = "--object-store.bucket", paramLabel = "BUCKET", description = "s3: bucket (env SE_OBJECT_STORE_BUCKET).")
  String objectStoreBucket;

  @Option(names = "--object-store.prefix", paramLabel = "PREFIX", description = "s3: key prefix (env SE_OBJECT_STORE_PREFIX).")
  String objectStorePrefix;

  @Option(names = "--object-store.endpoint", paramLabel = "URL", description = "s3: endpoint of an S3-compatible store (env SE_OBJECT_STORE_ENDPOINT).")
  String objectStoreEndpoint;

  @Option(names = "--object-store.region", paramLabel = "REGION", description = "s3: region (env SE_OBJECT_STORE_REGION, else AWS_REGION, else us-east-1).")
  String objectStoreRegion;

  @Option(names = "--secret-store.type", paramLabel = "TYPE", description = "file, memory, aws-sm or vault (env SE_SECRET_STORE_TYPE, default file).")
  String secretStoreType;

  @Option(names = "--secret-store.key", paramLabel = "KEY", description = "file: encryption key, 64 hex digits or base64 of 32 bytes (env SE_SECRET_STORE_KEY; prefer the variable).")
  String secretStoreKey;

  @Option(names = "--secret-store.file.key-file", paramLabel = "FILE", description = "file: a file holding the key (env SE_SECRET_STORE_FILE_KEY_FILE, default <data-dir>/secret-store.key if it exists).")
  String secretStoreKeyFile;

  @Option(names = "--secret-store.aws-sm.region", paramLabel = "REGION", description = "aws-sm: region (env SE_SECRET_STORE_AWS_SM_REGION, else AWS_REGION).")
  String awsSmRegion;

  @Option(names = "--secret-store.aws-sm.endpoint", paramLabel = "URL", description = "aws-sm: endpoint override (env SE_SECRET_STORE_AWS_SM_ENDPOINT).")
  String awsSmEndpoint;

  @Option(names = "--secret-store.aws-sm.prefix", paramLabel = "PREFIX", description = "aws-sm: name prefix (env SE_SECRET_STORE_AWS_SM_PREFIX, default storage-engine/).")
  String awsSmPrefix;

  @Option(names = "--secret-store.vault.address", paramLabel = "URL", description = "vault: server URL (env SE_SECRET_STORE_VAULT_ADDRESS).")
  String vaultAddress;

  @Option(names = "--secret-store.vault.token", paramLabel = "TOKEN", description = "vault: token (env SE_SECRET_STORE_VAULT_TOKEN; prefer the variable).")
  String vaultToken;

  @Option(names = "--secret-store.vault.namespace", paramLabel = "NS", description = "vault: namespace (env SE_SECRET_STORE_VAULT_NAMESPACE).")
  String vaultNamespace;

  @Option(names = "--secret-store.vault.mount", paramLabel = "MOUNT", description = "vault: KV v2 mount (env SE_SECRET_STORE_VAULT_MOUNT, default secret).")
  String vaultMount;

  @Option(names = "--secret-store.vault.prefix", paramLabel = "PREFIX", description = "vault: path prefix (env SE_SECRET_STORE_VAULT_PREFIX, default storage-engine/).")
  String vaultPrefix;

  @Option(names = "--ingest.flush-interval", paramLabel = "DURATION", description = "Group-commit window (env SE_INGEST_FLUSH_INTERVAL, default 1s).")
  String flushInterval;

  @Option(names = "--ingest.flush-bytes", paramLabel = "SIZE", description = "Group-commit size threshold (env SE_INGEST_FLUSH_BYTES, default 64MiB).")
  String flushBytes;

  @Option(names = "--ingest.memory-limit", paramLabel = "SIZE", description = "Global budget of unacknowledged ingest bytes (env SE_INGEST_MEMORY_LIMIT, default 1GiB).")
  String memoryLimit;

  @Option(names = "--reconcile.interval", paramLabel = "DURATION", description = "How often WAL is published to Iceberg (env SE_RECONCILE_INTERVAL, default 1s).")
  String reconcileInterval;

  @Option(names = "--maintenance.interval", paramLabel = "DURATION", description = "How often se dev maintains tables (env SE_MAINTENANCE_INTERVAL, default 30s).")
  String maintenanceInterval;

  /** Flags over environment over defaults. */
  ServerConfig resolve() {
    Map<ConfigKey, String> flags = new EnumMap<>(ConfigKey.class);
    put(flags, ConfigKey.SERVER_ADDRESS, serverAddress);
    put(flags, ConfigKey.DATA_DIR, dataDir);
    put(flags, ConfigKey.OBJECT_STORE_TYPE, objectStoreType);
    put(flags, ConfigKey.OBJECT_STORE_ROOT, objectStoreRoot);
    put(flags, ConfigKey.OBJECT_STORE_BUCKET, objectStoreBucket);
    put(flags, ConfigKey.OBJECT_STORE_PREFIX, objectStorePrefix);
    put(flags, ConfigKey.OBJECT_STORE_ENDPOINT, objectStoreEndpoint);
    put(flags, ConfigKey.OBJECT_STORE_REGION, objectStoreRegion);
    put(flags, ConfigKey.SECRET_STORE_TYPE, secretStoreType);
    put(flags, ConfigKey.SECRET_STORE_KEY, secretStoreKey);
    put(flags, ConfigKey.SECRET_STORE_FILE_KEY_FILE, secretStoreKeyFile);
    put(flags, ConfigKey.SECRET_STORE_AWS_SM_REGION, awsSmRegion);
    put(flags, ConfigKey.SECRET_STORE_AWS_SM_ENDPOINT, awsSmEndpoint);
    put(flags, ConfigKey.SECRET_STORE_AWS_SM_PREFIX, awsSmPrefix);
    put(flags, ConfigKey.SECRET_STORE_VAULT_ADDRESS, vaultAddress);
    put(flags, ConfigKey.SECRET_STORE_VAULT_TOKEN, vaultToken);
    put(flags, ConfigKey.SECRET_STORE_VAULT_NAMESPACE, vaultNamespace);
    put(flags, ConfigKey.SECRET_STORE_VAULT_MOUNT, vaultMount);
    put(flags, ConfigKey.SECRET_STORE_VAULT_PREFIX, vaultPrefix);
    put(flags, ConfigKey.INGEST_FLUSH_INTERVAL, flushInterval);
    put(flags, ConfigKey.INGEST_FLUSH_BYTES, flushBytes);
    put(flags, ConfigKey.INGEST_MEMORY_LIMIT, memoryLimit);
    put(flags, ConfigKey.RECONCILE_INTERVAL, reconcileInterval);
    put(flags, ConfigKey.MAINTENANCE_INTERVAL, maintenanceInterval);
    return ServerConfig.resolve(flags, System.getenv());
  }

  private static void put(Map<ConfigKey, String> flags, ConfigKey key, String value) {
    if (value != null) {
      flags.put(key, value);
    }
  }
}
