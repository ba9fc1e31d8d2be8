package io.storageengine.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.HexFormat;
import java.util.Properties;
import java.security.MessageDigest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Exception;

/** The contract against S3Proxy (transient backend), plus what is specific to S3. */
class S3ObjectStoreTest extends ObjectStoreContractTest {
  private static S3ProxyFixture s3;

  @BeforeAll
  static void startS3Proxy() {
    s3 = S3ProxyFixture.shared();
  }

  @Override
  protected ObjectStore newStore() {
    return s3.newIsolatedStore();
  }

  @Test
  void etagIsTheUnquotedMd5OfTheContent() throws Exception {
    String etag = store.put("md5", bytes("content"));

    String md5 = HexFormat.of().formatHex(
        MessageDigest.getInstance("MD5").digest(bytes("content")));
    assertThat(etag).isEqualTo(md5);
    assertThat(store.head("md5").orElseThrow().etag()).isEqualTo(md5);
  }

  @Test
  void storesUnderTheirPrefixOnly() {
    try (S3ObjectStore one = s3.newStore("shared/one");
        S3ObjectStore two = s3.newStore("/shared/two/");
        S3Client raw = s3.newClient()) {
      one.put("k", bytes("1"));
      two.put("k", bytes("2"));

      assertThat(text(one.get("k"))).isEqualTo("1");
      assertThat(text(two.get("k"))).isEqualTo("2");
      assertThat(one.list("")).extracting(ObjectStore.ObjectInfo::key).containsExactly("k");
      assertThat(raw.listObjectsV2(r -> r.bucket(s3.bucket()).prefix("shared/")).contents())
          .extracting(o -> o.key())
          .containsExactly("shared/one/k", "shared/two/k");
      assertThat(one.describe()).isEqualTo("s3://se-test/shared/one/");
    }
  }

  /**
   * Without the fixture's {@link AtomicConditionalBlobStore}, S3Proxy still answers 412 to a
   * conditional PUT whose condition fails; it just does not do so atomically under concurrency.
   */
  @Test
  void s3ProxyEnforcesConditionalWritesItself() {
    try (S3ProxyFixture plain = S3ProxyFixture.start("transient", new Properties(), false);
        S3Client raw = plain.newClient()) {
      String bucket = plain.bucket();
      raw.putObject(r -> r.bucket(bucket).key("cond"), RequestBody.fromString("v1"));

      assertThatThrownBy(() -> raw.putObject(
              r -> r.bucket(bucket).key("cond").ifNoneMatch("*"), RequestBody.fromString("v2")))
          .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.statusCode()).isEqualTo(412))
          .hasMessageContaining("Status Code: 412");
      assertThatThrownBy(() -> raw.putObject(
              r -> r.bucket(bucket).key("cond").ifMatch("\"0123\""), RequestBody.fromString("v2")))
          .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.statusCode()).isEqualTo(412))
          .hasMessageContaining("Status Code: 412");
      assertThat(raw.getObjectAsBytes(r -> r.bucket(bucket).key("cond")).asUtf8String())
          .isEqualTo("v1");
    }
  }

  @Test
  void configuredStoreWorksAgainstAnS3CompatibleEndpoint() {
    try (S3ObjectStore configured = S3ObjectStore.create(s3.config("configured"), s3.credentials())) {
      String etag = configured.putIfAbsent("k", bytes("v")).orElseThrow();

      assertThat(configured.putIfMatch("k", bytes("w"), etag)).isPresent();
      assertThat(text(configured.get("k"))).isEqualTo("w");
    }
  }

  @Test
  void missingBucketIsUnavailableAndNamesTheBucket() {
    try (S3ObjectStore missing = S3ObjectStore.create(
        ObjectStoreConfig.s3("no-such-bucket", null, s3.endpoint().toString(), null), s3.credentials())) {
      assertThatThrownBy(() -> missing.put("k", bytes("v")))
          .isInstanceOfSatisfying(SeException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE))
          .hasMessage("s3 object store: cannot write key 'k' in bucket 'no-such-bucket'"
              + " (HTTP 404 NoSuchBucket)");
      assertThatThrownBy(() -> missing.get("k"))
          .isInstanceOf(SeException.class)
          .hasMessageContaining("NoSuchBucket");
    }
  }

  @Test
  void wrongCredentialsAreUnavailableWithoutLeakingThem() {
    String secret = "wrong-secret-value";
    ObjectStoreConfig config = s3.config(null);
    try (S3ObjectStore store = S3ObjectStore.create(config,
        StaticCredentialsProvider.create(AwsBasicCredentials.create("wrong-access", secret)))) {
      assertThatThrownBy(() -> store.putIfAbsent("k", bytes("v")))
          .isInstanceOfSatisfying(SeException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE))
          .hasMessageStartingWith("s3 object store: conditional write of key 'k' in bucket 'se-test'"
              + " failed (HTTP 403")
          .hasMessageNotContaining(secret)
          .hasMessageNotContaining("wrong-access");
    }
  }

  @Test
  void unreachableServerIsUnavailable() {
    ObjectStoreConfig config = ObjectStoreConfig.s3("se-test", null, "http://127.0.0.1:1", "us-east-1");
    try (S3ObjectStore store = S3ObjectStore.create(config, s3.credentials())) {
      assertThatThrownBy(() -> store.head("k"))
          .isInstanceOfSatisfying(SeException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE))
          .hasMessageStartingWith("s3 object store: cannot read key 'k' in bucket 'se-test' (")
          .hasMessageNotContaining(S3ProxyFixture.SECRET_KEY);
    }
  }
}
