package io.storageengine.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ObjectStoresTest {
  @TempDir
  Path temp;

  @Test
  void createsEachBackend() {
    try (ObjectStore memory = ObjectStores.create(ObjectStoreConfig.memory());
        ObjectStore fs = ObjectStores.create(ObjectStoreConfig.fs(temp.resolve("fs")))) {
      assertThat(memory).isInstanceOf(MemoryObjectStore.class);
      assertThat(fs).isInstanceOf(FsObjectStore.class);
      assertThat(fs.describe()).startsWith("fs:").endsWith("fs");
    }
    try (ObjectStore s3 = ObjectStores.create(
        ObjectStoreConfig.s3("bucket", "a/b", "http://127.0.0.1:1", "eu-west-1"))) {
      assertThat(s3).isInstanceOf(S3ObjectStore.class);
      assertThat(s3.describe()).isEqualTo("s3://bucket/a/b/");
    }
  }

  @Test
  void typesParseCaseInsensitively() {
    assertThat(ObjectStoreConfig.Type.parse("FS")).isEqualTo(ObjectStoreConfig.Type.FS);
    assertThat(ObjectStoreConfig.Type.parse(" s3 ")).isEqualTo(ObjectStoreConfig.Type.S3);
    assertThat(ObjectStoreConfig.Type.MEMORY.id()).isEqualTo("memory");
    assertInvalid(() -> ObjectStoreConfig.Type.parse("gcs"),
        "invalid --object-store.type 'gcs': expected fs, memory or s3");
  }

  @Test
  void blankOptionsCountAsUnset() {
    ObjectStoreConfig config = ObjectStoreConfig.s3(" ", "", "  ", "");

    assertThat(config).isEqualTo(ObjectStoreConfig.s3(null, null, null, null));
  }

  @Test
  void missingOrInvalidOptionsAreNamed() {
    assertInvalid(() -> ObjectStores.create(null),
        "object store needs --object-store.type (fs, memory or s3)");
    assertInvalid(() -> ObjectStores.create(new ObjectStoreConfig(null, null, null, null, null, null)),
        "object store needs --object-store.type (fs, memory or s3)");
    assertInvalid(() -> ObjectStores.create(ObjectStoreConfig.fs(null)),
        "object store type fs needs --object-store.root");
    assertInvalid(() -> ObjectStores.create(ObjectStoreConfig.s3(null, null, null, null)),
        "object store type s3 needs --object-store.bucket");
    assertInvalid(() -> ObjectStores.create(ObjectStoreConfig.s3("Bad_Bucket", null, null, null)),
        "invalid --object-store.bucket 'Bad_Bucket': 3 to 63 lowercase letters, digits, '.' or '-'");
    assertInvalid(() -> ObjectStores.create(ObjectStoreConfig.s3("ab", null, null, null)),
        "invalid --object-store.bucket 'ab'");
    assertInvalid(() -> ObjectStores.create(ObjectStoreConfig.s3("bucket", null, "localhost:9000", null)),
        "invalid --object-store.endpoint 'localhost:9000': expected http(s)://host[:port]");
    assertInvalid(() -> ObjectStores.create(ObjectStoreConfig.s3("bucket", "a/../b", null, null)),
        "invalid --object-store.prefix 'a/../b': segments must be non-empty and not '.' or '..'");
  }

  @Test
  void regionComesFromTheConfigFirst() {
    assertThat(S3ObjectStore.region("eu-central-1")).isEqualTo("eu-central-1");
    if (System.getProperty("aws.region") == null && System.getenv("AWS_REGION") == null
        && System.getenv("AWS_DEFAULT_REGION") == null) {
      assertThat(S3ObjectStore.region(null)).isEqualTo("us-east-1");
    }
  }

  @Test
  void s3TakesCredentialsFromTheDefaultChain() {
    // The default chain reads the aws.accessKeyId / aws.secretAccessKey system properties first.
    S3ProxyFixture s3 = S3ProxyFixture.shared();
    System.setProperty("aws.accessKeyId", s3.accessKey());
    System.setProperty("aws.secretAccessKey", s3.secretKey());
    try (ObjectStore store = ObjectStores.create(s3.config("factory"))) {
      store.put("k", "v".getBytes());
      assertThat(store.get("k")).isPresent();
    } finally {
      System.clearProperty("aws.accessKeyId");
      System.clearProperty("aws.secretAccessKey");
    }
  }

  private static void assertInvalid(Runnable call, String message) {
    assertThatThrownBy(call::run)
        .isInstanceOfSatisfying(SeException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageStartingWith(message);
  }
}
