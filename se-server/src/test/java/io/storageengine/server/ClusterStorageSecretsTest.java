package io.storageengine.server;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.CatalogConfig;
import io.storageengine.common.SeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the server picks the file secret store's key, and that it never writes secrets in plaintext. */
class ClusterStorageSecretsTest {
  private static final String TOKEN = "rest-token-hunter2";

  @TempDir Path dir;

  private ServerConfig config() {
    return ServerConfig.defaults().with(ConfigKey.DATA_DIR, dir.toString());
  }

  private static CatalogConfig restWithToken() {
    return new CatalogConfig(CatalogConfig.Type.REST, "http://127.0.0.1:1/api", null, Map.of("token", TOKEN));
  }

  @Test
  void withoutAKeyTheServerRefusesToWriteSecrets() {
    try (ClusterStorage storage = ClusterStorage.open(config(), null)) {
      assertThatThrownBy(() -> storage.registry().create("tenant", restWithToken()))
          .isInstanceOf(SeException.class)
          .hasMessage("catalog 'tenant': secret store create failed");
    }
    assertThat(dir.resolve("secrets")).doesNotExist();
  }

  @Test
  void devGeneratesAnOwnerOnlyKeyAndEncryptsWithIt() throws Exception {
    ServerConfig dev = ClusterStorage.withDevKey(config());
    Path keyFile = dir.resolve("secret-store.key");
    assertThat(dev.get(ConfigKey.SECRET_STORE_FILE_KEY_FILE)).isEqualTo(keyFile.toString());
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(keyFile))).isEqualTo("rw-------");
    try (ClusterStorage storage = ClusterStorage.open(dev, null)) {
      storage.registry().create("tenant", restWithToken());
    }
    Path doc = dir.resolve("secrets/catalog/tenant.json");
    assertThat(Files.readString(doc, UTF_8)).doesNotContain(TOKEN).contains("\"format\":2");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(doc))).isEqualTo("rw-------");
    // A later server over the same data dir finds the generated key without being told.
    try (ClusterStorage storage = ClusterStorage.open(config(), null)) {
      assertThat(storage.registry().config("tenant").properties()).containsEntry("token", TOKEN);
    }
  }

  @Test
  void aKeyFromTheEnvironmentIsUsedAndAMalformedOneNamesTheVariable() {
    String hex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    ServerConfig withKey = ServerConfig.resolve(Map.of(ConfigKey.DATA_DIR, dir.toString()), Map.of("SE_SECRET_STORE_KEY", hex));
    try (ClusterStorage storage = ClusterStorage.open(withKey, null)) {
      storage.registry().create("tenant", restWithToken());
      assertThat(storage.registry().config("tenant").properties()).containsEntry("token", TOKEN);
    }
    ServerConfig bad = ServerConfig.resolve(Map.of(ConfigKey.DATA_DIR, dir.toString()), Map.of("SE_SECRET_STORE_KEY", "short"));
    assertThatThrownBy(() -> ClusterStorage.open(bad, null))
        .isInstanceOf(SeException.class)
        .hasMessageStartingWith("secret store key from SE_SECRET_STORE_KEY / --secret-store.key is neither 64 hex digits nor base64")
        .hasMessageNotContaining("short");
  }
}
