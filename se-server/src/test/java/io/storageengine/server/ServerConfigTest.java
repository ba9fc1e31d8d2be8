package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.broker.BrokerConfig;
import io.storageengine.common.config.Setting;
import io.storageengine.ingest.IngestConfig;
import io.storageengine.query.QueryConfig;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.maintenance.MaintenancePolicy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Pins every option of the server: its flag, environment variable and default; and how all settings resolve. */
class ServerConfigTest {
  @Test
  void everyKeyAndDefaultIsPinned() {
    Map<String, String> pinned = Arrays.stream(ConfigKey.values())
        .collect(Collectors.toMap(k -> k.flag() + " " + k.environmentVariable(), ConfigKey::defaultValue));
    assertThat(pinned).containsExactlyInAnyOrderEntriesOf(Map.ofEntries(
        Map.entry("server.address SE_SERVER_ADDRESS", "127.0.0.1:7777"),
        Map.entry("server.warmup-streams SE_SERVER_WARMUP_STREAMS", "500"),
        Map.entry("data-dir SE_DATA_DIR", ".se"),
        Map.entry("object-store.type SE_OBJECT_STORE_TYPE", "fs"),
        Map.entry("object-store.root SE_OBJECT_STORE_ROOT", ""),
        Map.entry("object-store.bucket SE_OBJECT_STORE_BUCKET", ""),
        Map.entry("object-store.prefix SE_OBJECT_STORE_PREFIX", ""),
        Map.entry("object-store.endpoint SE_OBJECT_STORE_ENDPOINT", ""),
        Map.entry("object-store.region SE_OBJECT_STORE_REGION", ""),
        Map.entry("secret-store.type SE_SECRET_STORE_TYPE", "file"),
        Map.entry("secret-store.key SE_SECRET_STORE_KEY", ""),
        Map.entry("secret-store.file.key-file SE_SECRET_STORE_FILE_KEY_FILE", ""),
        Map.entry("secret-store.aws-sm.region SE_SECRET_STORE_AWS_SM_REGION", ""),
        Map.entry("secret-store.aws-sm.endpoint SE_SECRET_STORE_AWS_SM_ENDPOINT", ""),
        Map.entry("secret-store.aws-sm.prefix SE_SECRET_STORE_AWS_SM_PREFIX", "storage-engine/"),
        Map.entry("secret-store.azure-kv.vault-url SE_SECRET_STORE_AZURE_KV_VAULT_URL", ""),
        Map.entry("secret-store.azure-kv.tenant-id SE_SECRET_STORE_AZURE_KV_TENANT_ID", ""),
        Map.entry("secret-store.azure-kv.client-id SE_SECRET_STORE_AZURE_KV_CLIENT_ID", ""),
        Map.entry("secret-store.azure-kv.client-secret SE_SECRET_STORE_AZURE_KV_CLIENT_SECRET", ""),
        Map.entry("secret-store.azure-kv.access-token SE_SECRET_STORE_AZURE_KV_ACCESS_TOKEN", ""),
        Map.entry("secret-store.azure-kv.prefix SE_SECRET_STORE_AZURE_KV_PREFIX", "storage-engine-"),
        Map.entry("secret-store.gcp-sm.project SE_SECRET_STORE_GCP_SM_PROJECT", ""),
        Map.entry("secret-store.gcp-sm.credentials-file SE_SECRET_STORE_GCP_SM_CREDENTIALS_FILE", ""),
        Map.entry("secret-store.gcp-sm.access-token SE_SECRET_STORE_GCP_SM_ACCESS_TOKEN", ""),
        Map.entry("secret-store.gcp-sm.endpoint SE_SECRET_STORE_GCP_SM_ENDPOINT", ""),
        Map.entry("secret-store.gcp-sm.prefix SE_SECRET_STORE_GCP_SM_PREFIX", "storage-engine-"),
        Map.entry("secret-store.vault.address SE_SECRET_STORE_VAULT_ADDRESS", ""),
        Map.entry("secret-store.vault.token SE_SECRET_STORE_VAULT_TOKEN", ""),
        Map.entry("secret-store.vault.namespace SE_SECRET_STORE_VAULT_NAMESPACE", ""),
        Map.entry("secret-store.vault.mount SE_SECRET_STORE_VAULT_MOUNT", "secret"),
        Map.entry("secret-store.vault.prefix SE_SECRET_STORE_VAULT_PREFIX", "storage-engine/"),
        Map.entry("ingest.flush-interval SE_INGEST_FLUSH_INTERVAL", "1s"),
        Map.entry("ingest.flush-bytes SE_INGEST_FLUSH_BYTES", "64MiB"),
        Map.entry("ingest.memory-limit SE_INGEST_MEMORY_LIMIT", "1GiB"),
        Map.entry("reconcile.interval SE_RECONCILE_INTERVAL", "1s"),
        Map.entry("reconcile.admission-deferral SE_RECONCILE_ADMISSION_DEFERRAL", "1s"),
        Map.entry("maintenance.interval SE_MAINTENANCE_INTERVAL", "30s"),
        Map.entry("dev.catalog SE_DEV_CATALOG", "warehouse"),
        Map.entry("rest.plan-page-size SE_REST_PLAN_PAGE_SIZE", "1000"),
        Map.entry("lb.probe-interval SE_LB_PROBE_INTERVAL", "500ms"),
        Map.entry("worker.concurrency SE_WORKER_CONCURRENCY", "2")));
    assertThat(ConfigKey.LB_PROBE_INTERVAL.setting().flags()).containsExactly("--lb.probe-interval", "--probe-interval");
    assertThat(ConfigKey.WORKER_CONCURRENCY.setting().flags()).containsExactly("--worker.concurrency", "--concurrency");
  }

  @Test
  void everyModuleSettingIsResolvedOnceWithAUniqueFlagAndVariable() {
    List<Setting<?>> all = ServerConfig.ALL_SETTINGS;
    assertThat(all).containsAll(Arrays.stream(ConfigKey.values()).map(ConfigKey::setting).toList())
        .containsAll(IngestConfig.SETTINGS).containsAll(ReconcileOptions.SETTINGS)
        .containsAll(MaintenancePolicy.SETTINGS).containsAll(QueryConfig.SETTINGS).containsAll(BrokerConfig.SETTINGS);
    assertThat(all.stream().map(Setting::key)).doesNotHaveDuplicates();
    assertThat(all.stream().flatMap(s -> s.flags().stream())).doesNotHaveDuplicates();
    assertThat(all.stream().map(Setting::environmentVariable)).doesNotHaveDuplicates();
    assertThat(ServerConfig.SETTINGS).doesNotContainAnyElementsOf(ServerConfig.ROLE_SETTINGS);
  }

  @Test
  void moduleConfigsComeFromTheResolvedSettings() {
    ServerConfig defaults = ServerConfig.defaults();
    assertThat(defaults.ingest()).isEqualTo(IngestConfig.defaults());
    assertThat(defaults.maintenance()).isEqualTo(MaintenancePolicy.defaults());
    assertThat(defaults.broker()).isEqualTo(BrokerConfig.defaults());
    assertThat(defaults.query()).isEqualTo(QueryConfig.defaults());
    assertThat(defaults.reconcile()).isEqualTo(ReconcileOptions.defaults());
    assertThat(defaults.integer(ConfigKey.WORKER_CONCURRENCY)).isEqualTo(2);

    ServerConfig config = ServerConfig.resolveSettings(
        Map.of("query.memory-limit", "2GB", "ingest.memory-limit", "512MiB"),
        Map.of("SE_QUERY_MEMORY_LIMIT", "3GB", "SE_RECONCILE_MAX_BYTES_PER_COMMIT", "8MiB",
            "SE_BROKER_LEASE_DURATION", "1m", "SE_MAINTENANCE_MIN_SNAPSHOTS", "3"));
    assertThat(config.query().duckdbMemoryLimit()).isEqualTo("2GB");
    assertThat(config.ingest().globalBytes()).isEqualTo(512L << 20);
    assertThat(config.bytes(ConfigKey.INGEST_MEMORY_LIMIT)).isEqualTo(512L << 20);
    assertThat(config.reconcile().maxBytesPerCommit()).isEqualTo(8L << 20);
    assertThat(config.broker().leaseDuration()).isEqualTo(Duration.ofMinutes(1));
    assertThat(config.maintenance().minSnapshots()).isEqualTo(3);
    assertThat(config.with(QueryConfig.BATCH_ROWS, "100").query().batchRows()).isEqualTo(100);
  }

  @Test
  void flagsWinOverEnvironmentWhichWinsOverDefaults() {
    ServerConfig config = ServerConfig.resolve(
        Map.of(ConfigKey.SERVER_ADDRESS, "127.0.0.1:9000"),
        Map.of("SE_SERVER_ADDRESS", "127.0.0.1:8000", "SE_INGEST_FLUSH_INTERVAL", "250ms"));
    assertThat(config.serverAddress().getPort()).isEqualTo(9000);
    assertThat(config.duration(ConfigKey.INGEST_FLUSH_INTERVAL)).isEqualTo(Duration.ofMillis(250));
    assertThat(config.bytes(ConfigKey.INGEST_FLUSH_BYTES)).isEqualTo(64L << 20);
    assertThat(config.objectStoreRoot()).isEqualTo(config.dataDir());
  }

  @Test
  void badValuesNameTheOption() {
    assertThatThrownBy(() -> ServerConfig.resolve(Map.of(ConfigKey.SERVER_ADDRESS, "nope"), Map.of()))
        .hasMessageContaining("--server.address").hasMessageContaining("nope");
    assertThatThrownBy(() -> ServerConfig.resolve(Map.of(ConfigKey.INGEST_FLUSH_INTERVAL, "soon"), Map.of()))
        .hasMessageContaining("--ingest.flush-interval").hasMessageContaining("soon");
    assertThatThrownBy(() -> ServerConfig.resolve(Map.of(ConfigKey.INGEST_FLUSH_BYTES, "lots"), Map.of()))
        .hasMessageContaining("--ingest.flush-bytes");
    assertThatThrownBy(() -> ServerConfig.resolve(Map.of(), Map.of("SE_OBJECT_STORE_TYPE", "ftp")))
        .hasMessageContaining("--object-store.type").hasMessageContaining("ftp");
    assertThatThrownBy(() -> ServerConfig.resolve(Map.of(), Map.of("SE_SECRET_STORE_TYPE", "keychain")))
        .hasMessage("--secret-store.type: expected file, memory, aws-sm, azure-kv, gcp-sm or vault, got 'keychain'");
    assertThatThrownBy(() -> ServerConfig.resolve(Map.of(ConfigKey.SERVER_ADDRESS, "127.0.0.1:99999"), Map.of()))
        .hasMessageContaining("out of range");
    assertThatThrownBy(() -> ServerConfig.resolveSettings(Map.of(), Map.of("SE_QUERY_DUCKDB_THREADS", "none")))
        .hasMessage("--query.duckdb-threads: expected an integer >= 1, got 'none'");
    assertThatThrownBy(() -> ServerConfig.resolveSettings(Map.of(), Map.of("SE_LB_PROBE_INTERVAL", "often")))
        .hasMessage("--lb.probe-interval: expected a duration such as 500ms, 1s, 5m, got 'often'");
    assertThatThrownBy(() -> ServerConfig.defaults().with(ConfigKey.WORKER_CONCURRENCY, "0"))
        .hasMessage("--worker.concurrency: expected an integer >= 1, got '0'");
  }
}
