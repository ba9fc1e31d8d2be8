package io.storageengine.secretstore;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.objectstore.ObjectStore;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class FileSecretStoreTest extends SecretStoreContractTest {
  private final ObjectStore objects = new MemoryObjectStore();

  @Override
  protected SecretStore newStore() {
    return new FileSecretStore(objects);
  }

  @Test
  void storesJsonDocumentsUnderSecrets() {
    store.put("catalog/example", "{\"type\":\"rest\"}".getBytes(UTF_8));
    assertThat(objects.list("secrets/")).extracting(ObjectStore.ObjectInfo::key)
        .containsExactly("secrets/catalog/example.json");
    JsonNode doc = Json.parse(objects.get("secrets/catalog/example.json").orElseThrow().data());
    assertThat(doc.get("format").asInt()).isEqualTo(1);
    assertThat(new String(Base64.getDecoder().decode(doc.get("value").asText()), UTF_8))
        .isEqualTo("{\"type\":\"rest\"}");
  }

  @Test
  void versionIsTheObjectEtag() {
    store.put("k", bytes("x"));
    assertThat(store.get("k").orElseThrow().version())
        .isEqualTo(objects.head("secrets/k.json").orElseThrow().etag());
  }

  @Test
  void aSecondStoreOverTheSameObjectsSeesTheSecrets() {
    store.put("catalog/a", bytes("shared"));
    SecretStore other = new FileSecretStore(objects);
    assertThat(text(other.get("catalog/a").orElseThrow())).isEqualTo("shared");
    assertThat(other.create("catalog/a", bytes("mine"))).isFalse();
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
  }
}
