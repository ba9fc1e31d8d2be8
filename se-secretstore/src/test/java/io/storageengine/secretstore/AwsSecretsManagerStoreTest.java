package io.storageengine.secretstore;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.Base64;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.secretsmanager.SecretsManagerClient;

/** The real AWS SDK client against an in-process server speaking Secrets Manager's protocol. */
class AwsSecretsManagerStoreTest extends SecretStoreContractTest {
  private static FakeAwsSecretsManager fake;
  private static int stores;

  @BeforeAll
  static void startFake() throws Exception {
    fake = new FakeAwsSecretsManager();
  }

  @AfterAll
  static void stopFake() {
    fake.close();
  }

  @Override
  protected SecretStore newStore() {
    SecretsManagerClient client = SecretsManagerClient.builder()
        .endpointOverride(fake.uri())
        .region(Region.US_EAST_1)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("AKIDTEST", "test-secret-key")))
        .httpClientBuilder(UrlConnectionHttpClient.builder())
        .build();
    // A prefix per test: the fake outlives the tests.
    return new AwsSecretsManagerStore(client, "se-test-" + (++stores) + "/", "aws-sm:test");
  }

  @Test
  void storesUnderThePrefixAsBinary() {
    store.put("catalog/a", bytes("hunter2"));
    String name = "se-test-" + stores + "/catalog/a";
    assertThat(fake.rawBinaries()).containsKey(name);
    assertThat(new String(Base64.getDecoder().decode(fake.rawBinaries().get(name)), UTF_8)).isEqualTo("hunter2");
    assertThat(fake.targets).contains("PutSecretValue", "CreateSecret");
  }

  @Test
  void readsAReferenceByItsNativeName() {
    fake.putString("prod/lake-credential", "client:s3cr3t");
    ExternalSecretStore external = (ExternalSecretStore) store;
    assertThat(new String(external.readReference("prod/lake-credential").orElseThrow(), UTF_8)).isEqualTo("client:s3cr3t");
    assertThat(external.readReference("prod/missing")).isEmpty();
  }

  @Test
  void unreachableServiceIsUnavailableNamingTheKey() {
    SecretsManagerClient client = SecretsManagerClient.builder()
        .endpointOverride(java.net.URI.create("http://127.0.0.1:1"))
        .region(Region.US_EAST_1)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("AKIDTEST", "test-secret-key")))
        .httpClientBuilder(UrlConnectionHttpClient.builder())
        .overrideConfiguration(c -> c.retryStrategy(software.amazon.awssdk.core.retry.RetryMode.STANDARD)
            .apiCallTimeout(java.time.Duration.ofSeconds(5)))
        .build();
    try (SecretStore down = new AwsSecretsManagerStore(client, "x/", "aws-sm:down")) {
      assertThatThrownBy(() -> down.put("catalog/a", bytes("hunter2")))
          .isInstanceOf(SeException.class)
          .hasMessageStartingWith("aws-sm secret store: cannot write secret 'catalog/a' (")
          .hasMessageNotContaining("hunter2")
          .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE));
    }
  }

  @Test
  void prefixWithForbiddenCharactersIsRefused() {
    assertThatThrownBy(() -> new AwsSecretsManagerStore(SecretsManagerClient.builder().region(Region.US_EAST_1)
        .httpClientBuilder(UrlConnectionHttpClient.builder()).build(), "bad prefix/", "x"))
        .isInstanceOf(SeException.class)
        .hasMessageContaining("--secret-store.aws-sm.prefix: 'bad prefix/' has characters");
  }
}
