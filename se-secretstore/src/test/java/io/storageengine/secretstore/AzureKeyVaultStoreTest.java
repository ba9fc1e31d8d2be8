package io.storageengine.secretstore;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.net.http.HttpClient;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Azure SDK's SecretClient against an in-process HTTPS server speaking Key Vault's REST API
 * (with its bearer challenge), through the store's own {@link AzureKeyVaultStore#open}. The SDK's
 * check that the vault host lies under the challenge's resource domain is off: a loopback server
 * cannot be {@code *.vault.azure.net}.
 */
class AzureKeyVaultStoreTest extends SecretStoreContractTest {
  private static TestTls tls;
  private static FakeKeyVault fake;
  private static LogCapture logs;
  private static int stores;

  @BeforeAll
  static void startFake() throws Exception {
    logs = new LogCapture();
    tls = TestTls.generate();
    fake = new FakeKeyVault(tls.server());
  }

  @AfterAll
  static void stopFake() {
    fake.close();
    // Nothing the tests stored, and no credential, reached a log line (SDK logs included).
    assertThat(logs.lines()).isNotEmpty().noneMatch(l -> l.contains("hunter2") || l.contains("s3cr3t")
        || l.contains(FakeKeyVault.TOKEN) || l.contains(FakeKeyVault.DENIED_TOKEN) || l.contains("aHVudGVyMg")
        || l.contains(FakeKeyVault.CLIENT_SECRET));
    logs.close();
  }

  @Override
  protected SecretStore newStore() {
    return open(FakeKeyVault.TOKEN, "se-test-" + (++stores) + "-");
  }

  private static AzureKeyVaultStore open(String token, String prefix) {
    try {
      return AzureKeyVaultStore.open(new AzureKeyVaultStore.Options(fake.uri().toString(), null, null, null, token,
          prefix), HttpClient.newBuilder().sslContext(tls.client()), false, null);
    } catch (SeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void namesAreEncodedAndValuesBase64() {
    store.put("catalog/my-lake_1.x", bytes("hunter2"));
    String name = "se-test-" + stores + "-catalog-smy--lake-u1-dx";
    Map<String, String> raw = fake.rawValues();
    assertThat(raw).containsKey(name);
    assertThat(new String(Base64.getDecoder().decode(raw.get(name)), UTF_8)).isEqualTo("hunter2");
    assertThat(SecretNames.AZURE.decode("catalog-smy--lake-u1-dx")).isEqualTo("catalog/my-lake_1.x");
    assertThat(text(store.get("catalog/my-lake_1.x").orElseThrow())).isEqualTo("hunter2");
    // Keys that differ only where the encoding escapes stay apart.
    store.put("catalog/my_lake", bytes("a"));
    store.put("catalog/my.lake", bytes("b"));
    store.put("catalog/my/lake", bytes("c"));
    assertThat(text(store.get("catalog/my_lake").orElseThrow())).isEqualTo("a");
    assertThat(text(store.get("catalog/my.lake").orElseThrow())).isEqualTo("b");
    assertThat(text(store.get("catalog/my/lake").orElseThrow())).isEqualTo("c");
  }

  @Test
  void deletePurgesSoTheNameIsFreeAgain() {
    store.put("catalog/a", bytes("one"));
    store.delete("catalog/a");
    assertThat(fake.isDeleted("se-test-" + stores + "-catalog-sa")).isFalse();
    assertThat(fake.requests).contains("DELETE /secrets", "GET /deletedsecrets", "DELETE /deletedsecrets");
    // A name still held by a deleted secret (its purge failed before) is purged by the next delete.
    store.put("catalog/held", bytes("one"));
    fake.softDelete("se-test-" + stores + "-catalog-sheld");
    assertThatThrownBy(() -> store.put("catalog/held", bytes("two")))
        .hasMessage("azure-kv secret store: cannot write secret 'catalog/held' (HTTP 409: the name is held by a deleted "
            + "secret; purge or recover it)");
    store.delete("catalog/held");
    store.put("catalog/held", bytes("two"));
    assertThat(text(store.get("catalog/held").orElseThrow())).isEqualTo("two");
  }

  @Test
  void readsAReferenceByItsNativeName() {
    fake.putText("lake-credential", "client:s3cr3t");
    ExternalSecretStore external = (ExternalSecretStore) store;
    assertThat(new String(external.readReference("lake-credential").orElseThrow(), UTF_8)).isEqualTo("client:s3cr3t");
    assertThat(external.readReference("missing-credential")).isEmpty();
  }

  @Test
  void aTextSecretWrittenByAnOperatorReadsAsItsText() {
    fake.putText("se-test-" + stores + "-catalog-sop", "{\"credential\":\"x\"}");
    assertThat(text(store.get("catalog/op").orElseThrow())).isEqualTo("{\"credential\":\"x\"}");
  }

  @Test
  void badCredentialsAreUnavailableWithoutTokenOrValue() {
    try (SecretStore bad = open("kv-wrong-token", "x-")) {
      assertThatThrownBy(() -> bad.put("catalog/a", bytes("hunter2")))
          .isInstanceOf(SeException.class)
          .hasMessage("azure-kv secret store: cannot write secret 'catalog/a' (HTTP 401: not authenticated, check the credentials)")
          .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE));
    }
    try (SecretStore denied = open(FakeKeyVault.DENIED_TOKEN, "x-")) {
      assertThatThrownBy(() -> denied.get("catalog/a"))
          .isInstanceOf(SeException.class)
          .hasMessage("azure-kv secret store: cannot read secret 'catalog/a' (HTTP 403: permission denied, check the "
              + "identity's access policy or role)")
          .hasMessageNotContaining(FakeKeyVault.DENIED_TOKEN);
    }
  }

  @Test
  void signsInAsAServicePrincipal() throws Exception {
    AzureKeyVaultStore.Options principal = new AzureKeyVaultStore.Options(fake.uri().toString(), FakeKeyVault.TENANT,
        FakeKeyVault.CLIENT_ID, FakeKeyVault.CLIENT_SECRET, null, "se-test-principal-");
    try (SecretStore signedIn = AzureKeyVaultStore.open(principal, HttpClient.newBuilder().sslContext(tls.client()),
        false, fake.uri().toString())) {
      signedIn.put("catalog/a", bytes("hunter2"));
      assertThat(text(signedIn.get("catalog/a").orElseThrow())).isEqualTo("hunter2");
    }
    assertThat(fake.tokensIssued()).isGreaterThanOrEqualTo(1);
    AzureKeyVaultStore.Options wrong = new AzureKeyVaultStore.Options(fake.uri().toString(), FakeKeyVault.TENANT,
        FakeKeyVault.CLIENT_ID, "not-the-s3cr3t", null, "se-test-principal-");
    try (SecretStore refused = AzureKeyVaultStore.open(wrong, HttpClient.newBuilder().sslContext(tls.client()),
        false, fake.uri().toString())) {
      assertThatThrownBy(() -> refused.get("catalog/a"))
          .isInstanceOf(SeException.class)
          .hasMessageStartingWith("azure-kv secret store: cannot read secret 'catalog/a' (")
          .hasMessageNotContaining("not-the-s3cr3t")
          .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE));
    }
  }

  @Test
  void configurationIsChecked() {
    assertThatThrownBy(() -> AzureKeyVaultStore.open(new AzureKeyVaultStore.Options("http://127.0.0.1:1", null, null,
        null, "t", null)))
        .isInstanceOf(SeException.class)
        .hasMessage("--secret-store.azure-kv.vault-url: expected an https URL, got 'http://127.0.0.1:1'");
    assertThatThrownBy(() -> AzureKeyVaultStore.open(new AzureKeyVaultStore.Options(" ", null, null, null, null, null)))
        .hasMessageStartingWith("azure-kv secret store: no vault URL; set --secret-store.azure-kv.vault-url");
    assertThatThrownBy(() -> AzureKeyVaultStore.open(new AzureKeyVaultStore.Options("https://v.vault.azure.net", null,
        "client", "hunter2", null, null)))
        .hasMessageNotContaining("hunter2")
        .hasMessageStartingWith("azure-kv secret store: a client secret needs --secret-store.azure-kv.tenant-id");
    assertThatThrownBy(() -> open(FakeKeyVault.TOKEN, "bad_prefix"))
        .hasMessageContaining("--secret-store.azure-kv.prefix: 'bad_prefix' has characters");
  }

  @Test
  void keysTooLongForKeyVaultAreRefused() {
    String key = "catalog/" + "a".repeat(120);
    assertThatThrownBy(() -> store.put(key, bytes("v")))
        .isInstanceOf(SeException.class)
        .hasMessageContaining("exceeds Key Vault's 127 characters")
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
  }
}
