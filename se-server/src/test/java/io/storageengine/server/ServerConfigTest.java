package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Pins every option: its flag, environment variable and default. */
class ServerConfigTest {
  @Test
  void everyKeyAndDefaultIsPinned() {
    Map<String, String> pinned = Arrays.stream(ConfigKey.values())
        .collect(Collectors.toMap(k -> k.flag() + " " + k.environmentVariable(), ConfigKey::defaultValue));
    assertThat(pinned).containsExactlyInAnyOrderEntriesOf(Map.ofEntries(
        Map.entry("server.address SE_SERVER_ADDRESS", "127.0.0.1:7777"),
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
        Map.entry("secret-store.vault.address SE_SECRET_STORE_VAULT_ADDRESS", ""),
        Map.entry("secret-store.vault.token SE_SECRET_STORE_VAULT_TOKEN", ""),
        Map.entry("secret-store.vault.namespace SE_SECRET_STORE_VAULT_NAMESPACE", ""),
        Map.entry("secret-store.vault.mount SE_SECRET_STORE_VAULT_MOUNT", "secret"),
        Map.entry("secret-store.vault.prefix SE_SECRET_STORE_VAULT_PREFIX", "storage-engine/"),
        Map.entry("ingest.flush-interval SE_INGEST_FLUSH_INTERVAL", "1s"),
        Map.entry("ingest.flush-bytes SE_INGEST_FLUSH_BYTES", "64MiB"),
        Map.entry("ingest.memory-limit SE_INGEST_MEMORY_LIMIT", "1GiB"),
        Map.entry("reconcile.interval SE_RECONCILE_INTERVAL", "1s"),
        Map.entry("maintenance.interval SE_MAINTENANCE_INTERVAL", "30s"),
        Map.entry("dev.catalog SE_DEV_CATALOG", "warehouse")));
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
        .hasMessage("--secret-store.type: expected file, memory, aws-sm or vault, got 'keychain'");
    assertThatThrownBy(() -> ServerConfig.resolve(Map.of(ConfigKey.SERVER_ADDRESS, "127.0.0.1:99999"), Map.of()))
        .hasMessageContaining("out of range");
  }
}
