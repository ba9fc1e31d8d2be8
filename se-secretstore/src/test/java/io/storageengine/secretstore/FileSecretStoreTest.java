package io.storageengine.secretstore;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.FsObjectStore;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.objectstore.ObjectStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileSecretStoreTest extends SecretStoreContractTest {
  private final ObjectStore objects = new MemoryObjectStore();
  private final SecretStoreKey key = SecretStoreKey.random();

  @TempDir Path dir;

  @Override
  protected SecretStore newStore() {
    return new FileSecretStore(objects, key);
  }

  @Test
  void storesEncryptedJsonDocumentsUnderSecrets() {
    store.put("catalog/example", "{\"type\":\"rest\",\"credential\":\"hunter2\"}".getBytes(UTF_8));
    assertThat(objects.list("secrets/")).extracting(ObjectStore.ObjectInfo::key)
        .containsExactly("secrets/catalog/example.json");
    byte[] raw = objects.get("secrets/catalog/example.json").orElseThrow().data();
    JsonNode doc = Json.parse(raw);
    assertThat(doc.get("format").asInt()).isEqualTo(2);
    assertThat(doc.get("alg").asText()).isEqualTo("A256GCM");
    assertThat(doc.get("kid").asText()).isEqualTo(key.id());
    assertThat(Base64.getDecoder().decode(doc.get("nonce").asText())).hasSize(12);
    String text = new String(raw, UTF_8);
    assertThat(text).doesNotContain("hunter2").doesNotContain("rest")
        .doesNotContain(Base64.getEncoder().encodeToString("{\"type\":\"rest\"".getBytes(UTF_8)).substring(0, 12));
    assertThat(text(store.get("catalog/example").orElseThrow())).contains("hunter2");
  }

  @Test
  void everyWriteUsesAFreshNonce() {
    store.put("k", bytes("same"));
    String first = Json.parse(objects.get("secrets/k.json").orElseThrow().data()).get("nonce").asText();
    store.put("k", bytes("same"));
    String second = Json.parse(objects.get("secrets/k.json").orElseThrow().data()).get("nonce").asText();
    assertThat(second).isNotEqualTo(first);
  }

  @Test
  void onTheFsStoreTheBytesOnDiskHoldNoPlaintextAndAreOwnerOnly() throws Exception {
    try (FsObjectStore fs = new FsObjectStore(dir)) {
      SecretStore onDisk = new FileSecretStore(fs, key);
      onDisk.put("catalog/a", bytes("{\"credential\":\"hunter2-on-disk\"}"));
      assertThat(onDisk.create("catalog/b", bytes("hunter2-created"))).isTrue();
      for (String name : new String[] {"a", "b"}) {
        Path file = dir.resolve("secrets/catalog/" + name + ".json");
        byte[] bytes = Files.readAllBytes(file);
        assertThat(new String(bytes, UTF_8)).doesNotContain("hunter2");
        assertThat(HexFormat.of().formatHex(bytes)).doesNotContain(HexFormat.of().formatHex(bytes("hunter2")));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
      }
      assertThat(text(onDisk.get("catalog/a").orElseThrow())).contains("hunter2-on-disk");
    }
  }

  @Test
  void versionIsTheObjectEtag() {
    store.put("k", bytes("x"));
    assertThat(store.get("k").orElseThrow().version())
        .isEqualTo(objects.head("secrets/k.json").orElseThrow().etag());
  }

  @Test
  void aSecondStoreWithTheSameKeySeesTheSecrets() {
    store.put("catalog/a", bytes("shared"));
    SecretStore other = new FileSecretStore(objects, key);
    assertThat(text(other.get("catalog/a").orElseThrow())).isEqualTo("shared");
    assertThat(other.create("catalog/a", bytes("mine"))).isFalse();
  }

  @Test
  void wrongKeyIsAClearErrorNamingBothKeyIds() {
    store.put("catalog/a", bytes("hunter2"));
    SecretStoreKey other = SecretStoreKey.random();
    SecretStore wrong = new FileSecretStore(objects, other);
    assertThatThrownBy(() -> wrong.get("catalog/a"))
        .isInstanceOf(SeException.class)
        .hasMessage("file secret store: secret 'catalog/a' was encrypted with another key (key id " + key.id()
            + "; the configured key has id " + other.id() + "): configure the key it was written with")
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.INTERNAL));
  }

  @Test
  void documentCopiedToAnotherKeyFailsAuthentication() {
    store.put("catalog/a", bytes("hunter2"));
    objects.put("secrets/catalog/b.json", objects.get("secrets/catalog/a.json").orElseThrow().data());
    assertThatThrownBy(() -> store.get("catalog/b"))
        .isInstanceOf(SeException.class)
        .hasMessage("file secret store: secret 'catalog/b' fails authentication: it was altered, or copied from another key");
  }

  @Test
  void legacyPlaintextDocumentIsReadAndReEncryptedOnNextWrite() {
    objects.put("secrets/catalog/old.json", ("{\"format\":1,\"revision\":\"r1\",\"value\":\""
        + Base64.getEncoder().encodeToString(bytes("legacy-hunter2")) + "\"}").getBytes(UTF_8));
    assertThat(text(store.get("catalog/old").orElseThrow())).isEqualTo("legacy-hunter2");
    store.put("catalog/old", bytes("legacy-hunter2"));
    byte[] raw = objects.get("secrets/catalog/old.json").orElseThrow().data();
    assertThat(Json.parse(raw).get("format").asInt()).isEqualTo(2);
    assertThat(new String(raw, UTF_8)).doesNotContain(Base64.getEncoder().encodeToString(bytes("legacy-hunter2")));
    assertThat(text(store.get("catalog/old").orElseThrow())).isEqualTo("legacy-hunter2");
  }

  @Test
  void withoutAKeyWritesAreRefusedSayingHowToConfigureOne() {
    FileSecretStore keyless = FileSecretStore.withoutKey(objects);
    assertThat(keyless.encrypts()).isFalse();
    for (Runnable write : new Runnable[] {
        () -> keyless.put("catalog/a", bytes("hunter2")), () -> keyless.create("catalog/a", bytes("hunter2"))}) {
      assertThatThrownBy(write::run)
          .isInstanceOf(SeException.class)
          .hasMessageStartingWith("file secret store: refusing to write secret 'catalog/a' in plaintext because no "
              + "encryption key is configured; set SE_SECRET_STORE_KEY")
          .hasMessageContaining("--secret-store.file.key-file")
          .hasMessageNotContaining("hunter2")
          .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE));
    }
    assertThat(objects.list("secrets/")).isEmpty();
  }

  @Test
  void withoutAKeyLegacyDocumentsAreReadButEncryptedOnesAreAClearError() {
    objects.put("secrets/catalog/old.json", ("{\"format\":1,\"value\":\""
        + Base64.getEncoder().encodeToString(bytes("legacy")) + "\"}").getBytes(UTF_8));
    store.put("catalog/new", bytes("hunter2"));
    FileSecretStore keyless = FileSecretStore.withoutKey(objects);
    assertThat(text(keyless.get("catalog/old").orElseThrow())).isEqualTo("legacy");
    assertThatThrownBy(() -> keyless.get("catalog/new"))
        .isInstanceOf(SeException.class)
        .hasMessageStartingWith("file secret store: secret 'catalog/new' is encrypted (key id " + key.id()
            + ") but no key is configured; set SE_SECRET_STORE_KEY");
  }

  @Test
  void corruptDocumentIsInternalWithoutContent() {
    objects.put("secrets/catalog/bad.json", "{\"value\": \"hunter2".getBytes(UTF_8));
    assertThatThrownBy(() -> store.get("catalog/bad"))
        .isInstanceOf(SeException.class)
        .hasMessage("secret 'catalog/bad' is unreadable")
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.INTERNAL));
  }

  @Test
  void describesItsLocation() {
    assertThat(store.describe()).isEqualTo("file:memory/secrets/");
    assertThat(FileSecretStore.withoutKey(objects).describe()).isEqualTo("file:memory/secrets/ (no key: read-only)");
  }
}
