package io.storageengine.secretstore;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The Vault store over HTTP against an in-process server of the KV v2 API. */
class VaultSecretStoreTest extends SecretStoreContractTest {
  private static FakeVault fake;
  private static int stores;

  @BeforeAll
  static void startFake() throws Exception {
    fake = new FakeVault();
  }

  @AfterAll
  static void stopFake() {
    fake.close();
  }

  @Override
  protected SecretStore newStore() {
    return new VaultSecretStore(fake.uri(), FakeVault.TOKEN, null, "secret", "se-test-" + (++stores) + "/");
  }

  @Test
  void deletedAndRecreatedKeyGetsANewVersion() {
    store.put("catalog/a", bytes("one"));
    String first = store.get("catalog/a").orElseThrow().version();
    store.delete("catalog/a");
    store.put("catalog/a", bytes("two"));
    assertThat(first).startsWith("1@");
    assertThat(store.get("catalog/a").orElseThrow().version()).startsWith("1@").isNotEqualTo(first);
  }

  @Test
  void readsAReferenceFieldByPath() {
    fake.putRaw("prod/lake", Json.object().put("value", "v-secret").put("credential", "client:s3cr3t"));
    ExternalSecretStore external = (ExternalSecretStore) store;
    assertThat(new String(external.readReference("prod/lake#credential").orElseThrow(), UTF_8)).isEqualTo("client:s3cr3t");
    assertThat(new String(external.readReference("prod/lake").orElseThrow(), UTF_8)).isEqualTo("v-secret");
    assertThat(external.readReference("prod/none")).isEmpty();
    assertThatThrownBy(() -> external.readReference("prod/lake#nope"))
        .isInstanceOf(SeException.class).hasMessage("vault secret 'prod/lake' has no field 'nope'");
  }

  @Test
  void wrongTokenIsUnavailableWithoutTheToken() {
    try (SecretStore bad = new VaultSecretStore(fake.uri(), "hvs.wrong", null, "secret", "x/")) {
      assertThatThrownBy(() -> bad.put("catalog/a", bytes("hunter2")))
          .isInstanceOf(SeException.class)
          .hasMessage("vault secret store: cannot write secret 'catalog/a' (HTTP 403: permission denied, check the token and its policy)")
          .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE));
    }
  }

  @Test
  void missingTokenIsRefused() {
    assertThatThrownBy(() -> new VaultSecretStore(fake.uri(), " ", null, null, null))
        .isInstanceOf(SeException.class)
        .hasMessage("vault secret store: no token; set --secret-store.vault.token or SE_SECRET_STORE_VAULT_TOKEN");
  }
}
