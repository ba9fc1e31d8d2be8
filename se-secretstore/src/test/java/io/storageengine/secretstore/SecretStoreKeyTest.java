package io.storageengine.secretstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.SeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SecretStoreKeyTest {
  @TempDir Path dir;

  @Test
  void hexAndBase64FormsGiveTheSameKey() {
    byte[] raw = new byte[32];
    for (int i = 0; i < raw.length; i++) {
      raw[i] = (byte) (i * 7);
    }
    SecretStoreKey hex = SecretStoreKey.parse(HexFormat.of().formatHex(raw), "test");
    SecretStoreKey b64 = SecretStoreKey.parse(" " + Base64.getEncoder().encodeToString(raw) + "\n", "test");
    SecretStoreKey url = SecretStoreKey.parse(Base64.getUrlEncoder().withoutPadding().encodeToString(raw), "test");
    assertThat(hex.id()).isEqualTo(b64.id()).isEqualTo(url.id()).hasSize(16);
    assertThat(hex.toString()).isEqualTo("SecretStoreKey[id=" + hex.id() + "]");
  }

  @Test
  void badKeysAreRefusedWithoutQuotingThem() {
    assertThatThrownBy(() -> SecretStoreKey.parse("not a key!", "SE_SECRET_STORE_KEY"))
        .isInstanceOf(SeException.class)
        .hasMessageStartingWith("secret store key from SE_SECRET_STORE_KEY is neither 64 hex digits nor base64")
        .hasMessageNotContaining("not a key!");
    assertThatThrownBy(() -> SecretStoreKey.parse(Base64.getEncoder().encodeToString(new byte[16]), "SE_SECRET_STORE_KEY"))
        .isInstanceOf(SeException.class)
        .hasMessageStartingWith("secret store key from SE_SECRET_STORE_KEY must be 256 bits (32 bytes), got 16 bytes");
    assertThatThrownBy(() -> SecretStoreKey.readFile(dir.resolve("none.key")))
        .isInstanceOf(SeException.class)
        .hasMessage("secret store key file '" + dir.resolve("none.key") + "' does not exist");
  }

  @Test
  void generatedKeyFileIsOwnerOnlyAndReusedAfterwards() throws Exception {
    Path file = dir.resolve("data/secret-store.key");
    SecretStoreKey first = SecretStoreKey.readOrGenerate(file);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
    assertThat(SecretStoreKey.readOrGenerate(file).id()).isEqualTo(first.id());
    assertThat(SecretStoreKey.readFile(file).id()).isEqualTo(first.id());
    try (var files = Files.list(file.getParent())) {
      assertThat(files).containsExactly(file);
    }
  }
}
