package io.storageengine.secretstore;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The official Secret Manager client (gRPC) against a loopback server of Secret Manager's v1
 * service, through the store's own {@link GcpSecretManagerStore#open} (plaintext endpoint, fixed
 * access token).
 */
class GcpSecretManagerStoreTest extends SecretStoreContractTest {
  private static final String PROJECT = "se-test-project";
  private static FakeSecretManager fake;
  private static LogCapture logs;
  private static int stores;

  @BeforeAll
  static void startFake() throws Exception {
    logs = new LogCapture();
    // gRPC's frame logger prints request headers at DEBUG; se's logging keeps io.grpc.netty at WARN (Logging).
    ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger("io.grpc.netty"))
        .setLevel(ch.qos.logback.classic.Level.WARN);
    fake = new FakeSecretManager();
  }

  @AfterAll
  static void stopFake() {
    fake.close();
    assertThat(logs.lines()).noneMatch(l -> l.contains("hunter2") || l.contains("s3cr3t")
        || l.contains(FakeSecretManager.TOKEN) || l.contains(FakeSecretManager.DENIED_TOKEN));
    logs.close();
  }

  @Override
  protected SecretStore newStore() {
    return open(FakeSecretManager.TOKEN, "se-test-" + (++stores) + "-");
  }

  private static GcpSecretManagerStore open(String token, String prefix) {
    return GcpSecretManagerStore.open(new GcpSecretManagerStore.Options(PROJECT, null, token, fake.endpoint(), prefix));
  }

  private static String resource(String id) {
    return "projects/" + PROJECT + "/secrets/" + id;
  }

  @Test
  void namesAreEncodedAndValuesRaw() {
    store.put("catalog/my-lake_1.x", bytes("hunter2"));
    String name = resource("se-test-" + stores + "-catalog_smy-lake__1_dx");
    assertThat(fake.latestValues()).containsKey(name);
    assertThat(new String(fake.latestValues().get(name), UTF_8)).isEqualTo("hunter2");
    assertThat(SecretNames.GCP.decode("catalog_smy-lake__1_dx")).isEqualTo("catalog/my-lake_1.x");
    store.put("catalog/my_lake", bytes("a"));
    store.put("catalog/my.lake", bytes("b"));
    store.put("catalog/my/lake", bytes("c"));
    assertThat(text(store.get("catalog/my_lake").orElseThrow())).isEqualTo("a");
    assertThat(text(store.get("catalog/my.lake").orElseThrow())).isEqualTo("b");
    assertThat(text(store.get("catalog/my/lake").orElseThrow())).isEqualTo("c");
  }

  @Test
  void deletedAndRecreatedKeyGetsANewVersion() {
    store.put("catalog/a", bytes("one"));
    String first = store.get("catalog/a").orElseThrow().version();
    store.delete("catalog/a");
    assertThat(fake.exists(resource("se-test-" + stores + "-catalog_sa"))).isFalse();
    store.put("catalog/a", bytes("two"));
    assertThat(first).startsWith("1@");
    assertThat(store.get("catalog/a").orElseThrow().version()).startsWith("1@").isNotEqualTo(first);
  }

  @Test
  void aSecretLeftWithoutVersionIsTakenOverOnlyWhenStale() {
    String recent = resource("se-test-" + stores + "-catalog_srecent");
    fake.putEmpty(recent, Instant.now());
    // A creator may be between its two calls: the key reads absent and is not taken.
    assertThat(store.get("catalog/recent")).isEmpty();
    assertThat(store.create("catalog/recent", bytes("late"))).isFalse();

    String stale = resource("se-test-" + stores + "-catalog_sstale");
    fake.putEmpty(stale, Instant.now().minus(Duration.ofMinutes(GcpSecretManagerStore.STALE_MINUTES + 1)));
    assertThat(store.create("catalog/stale", bytes("taken over"))).isTrue();
    assertThat(text(store.get("catalog/stale").orElseThrow())).isEqualTo("taken over");
  }

  @Test
  void readsAReferenceByIdOrFullName() {
    fake.putRaw(resource("lake-credential"), bytes("client:s3cr3t-1"));
    fake.putRaw(resource("lake-credential"), bytes("client:s3cr3t-2"));
    ExternalSecretStore external = (ExternalSecretStore) store;
    assertThat(new String(external.readReference("lake-credential").orElseThrow(), UTF_8)).isEqualTo("client:s3cr3t-2");
    assertThat(new String(external.readReference("lake-credential/1").orElseThrow(), UTF_8)).isEqualTo("client:s3cr3t-1");
    assertThat(new String(external.readReference(resource("lake-credential")).orElseThrow(), UTF_8))
        .isEqualTo("client:s3cr3t-2");
    assertThat(new String(external.readReference(resource("lake-credential") + "/versions/1").orElseThrow(), UTF_8))
        .isEqualTo("client:s3cr3t-1");
    assertThat(external.readReference("missing-credential")).isEmpty();
  }

  @Test
  void referencesResolveThroughTheServerOptions() {
    fake.putRaw(resource("resolver-credential"), bytes("client:s3cr3t-r"));
    SecretStoreOptions options = new SecretStoreOptions("file", java.util.Map.of("gcp-sm.project", PROJECT,
        "gcp-sm.access-token", FakeSecretManager.TOKEN, "gcp-sm.endpoint", fake.endpoint()));
    try (ReferenceResolver resolver = new ReferenceResolver(options)) {
      assertThat(resolver.resolve(SecretReference.parse("secret-ref:gcp-sm://resolver-credential"))).isEqualTo("client:s3cr3t-r");
      assertThatThrownBy(() -> resolver.resolve(SecretReference.parse("secret-ref:gcp-sm://nothing-here")))
          .isInstanceOf(SeException.class)
          .hasMessageStartingWith("secret reference secret-ref:gcp-sm://nothing-here: no such secret in gcp-sm:");
      assertThatThrownBy(() -> resolver.resolve(SecretReference.parse("secret-ref:azure-kv://lake")))
          .isInstanceOf(SeException.class)
          .hasMessageStartingWith("azure-kv secret store: no vault URL; set --secret-store.azure-kv.vault-url")
          .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    }
  }

  @Test
  void badCredentialsAreUnavailableWithoutTokenOrValue() {
    try (SecretStore bad = open("gcp-wrong-token", "x-")) {
      assertThatThrownBy(() -> bad.put("catalog/a", bytes("hunter2")))
          .isInstanceOf(SeException.class)
          .hasMessage("gcp-sm secret store: cannot write secret 'catalog/a' (UNAUTHENTICATED: not authenticated, check the credentials)")
          .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE));
    }
    try (SecretStore denied = open(FakeSecretManager.DENIED_TOKEN, "x-")) {
      assertThatThrownBy(() -> denied.get("catalog/a"))
          .isInstanceOf(SeException.class)
          .hasMessage("gcp-sm secret store: cannot read secret 'catalog/a' (PERMISSION_DENIED: permission denied, check "
              + "the service account's roles)")
          .hasMessageNotContaining(FakeSecretManager.DENIED_TOKEN);
    }
  }

  @Test
  void configurationIsChecked() {
    assertThatThrownBy(() -> GcpSecretManagerStore.open(new GcpSecretManagerStore.Options(" ", null, "t", null, null)))
        .isInstanceOf(SeException.class)
        .hasMessage("gcp-sm secret store: no project; set --secret-store.gcp-sm.project or SE_SECRET_STORE_GCP_SM_PROJECT");
    assertThatThrownBy(() -> GcpSecretManagerStore.open(new GcpSecretManagerStore.Options(PROJECT, null, "t",
        "not an endpoint", null)))
        .hasMessage("--secret-store.gcp-sm.endpoint: expected host:port or http://host:port, got 'not an endpoint'");
    assertThatThrownBy(() -> GcpSecretManagerStore.open(new GcpSecretManagerStore.Options(PROJECT,
        "/nonexistent/key.json", null, null, null)))
        .hasMessageStartingWith("--secret-store.gcp-sm.credentials-file: cannot read service-account credentials");
    assertThatThrownBy(() -> open(FakeSecretManager.TOKEN, "bad/prefix"))
        .hasMessageContaining("--secret-store.gcp-sm.prefix: 'bad/prefix' has characters");
  }
}
