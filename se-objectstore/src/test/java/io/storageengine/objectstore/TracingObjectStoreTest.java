package io.storageengine.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.opentelemetry.sdk.trace.data.SpanData;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.common.telemetry.EndedSpanListener;
import io.storageengine.common.telemetry.RetryScope;
import io.storageengine.common.telemetry.SpanFields;
import io.storageengine.common.telemetry.Telemetry;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TracingObjectStoreTest {
  private static final byte[] PAYLOAD = "secret-payload-bytes".getBytes(StandardCharsets.UTF_8);

  private final List<SpanData> spans = new CopyOnWriteArrayList<>();
  private final Telemetry telemetry = Telemetry.builder().spanProcessor(
      new EndedSpanListener(span -> spans.add(span.toSpanData()))).build();

  @AfterEach
  void close() {
    telemetry.close();
  }

  @Test
  void everyOperationIsOneSpanWithItsFields() {
    TracingObjectStore store = new TracingObjectStore(new MemoryObjectStore(), "cluster", telemetry);
    String etag = store.putIfAbsent("a/b", PAYLOAD).orElseThrow();
    assertThat(store.putIfAbsent("a/b", PAYLOAD)).isEmpty();
    store.putIfMatch("a/b", PAYLOAD, etag).orElseThrow();
    store.put("a/c", PAYLOAD);
    assertThat(store.get("a/b")).isPresent();
    assertThat(store.getRange("a/b", 0, 4)).isPresent();
    assertThat(store.head("a/c")).isPresent();
    assertThat(store.list("a/")).hasSize(2);
    assertThat(store.listChildren("").directories()).containsExactly("a/");
    store.delete("a/c");

    assertThat(spans).extracting(SpanData::getName).containsOnly(SpanFields.STORAGE_OPERATION);
    assertThat(spans).extracting(s -> s.getAttributes().get(SpanFields.IO_OPERATION)).containsExactly(
        "put_if_absent", "put_if_absent", "put_if_match", "put", "get", "get_range", "head", "list", "list_children", "delete");
    SpanData created = spans.get(0);
    assertThat(created.getAttributes().get(SpanFields.IO_PATH)).isEqualTo("a/b");
    assertThat(created.getAttributes().get(SpanFields.IO_ROOT)).isEqualTo("memory");
    assertThat(created.getAttributes().get(SpanFields.IO_CONDITION_MET)).isTrue();
    assertThat(created.getAttributes().get(SpanFields.IO_SIZE)).isEqualTo(PAYLOAD.length);
    assertThat(created.getAttributes().get(SpanFields.IO_RETRY_COUNT)).isZero();
    assertThat(created.getAttributes().get(SpanFields.ERROR)).isFalse();
    assertThat(spans.get(1).getAttributes().get(SpanFields.IO_CONDITION_MET)).isFalse();
    assertThat(spans.get(7).getAttributes().get(SpanFields.IO_RESULT_COUNT)).isEqualTo(2);
    assertThat(spans.get(8).getAttributes().get(SpanFields.IO_PATH)).isEqualTo("");
    assertThat(spans.get(8).getAttributes().get(SpanFields.IO_RESULT_COUNT)).isEqualTo(1);
    // No byte payloads in any field.
    for (SpanData span : spans) {
      assertThat(span.getAttributes().asMap().values()).allSatisfy(
          v -> assertThat(String.valueOf(v)).doesNotContain("secret-payload"));
    }
    assertThat(telemetry.metrics().scrape()).contains(
        "se_objectstore_operation_duration_seconds_count{operation=\"put_if_absent\",outcome=\"ok\",storage=\"cluster\"} 2");
  }

  @Test
  void s3StoresReportBucketAndRoot() {
    ObjectStore described = new Forwarding() {
      @Override
      public String describe() {
        return "s3://my-bucket/cluster/prefix/";
      }
    };
    new TracingObjectStore(described, "cluster", telemetry).head("k");
    assertThat(spans.get(0).getAttributes().get(SpanFields.IO_BUCKET)).isEqualTo("my-bucket");
    assertThat(spans.get(0).getAttributes().get(SpanFields.IO_ROOT)).isEqualTo("cluster/prefix/");
  }

  @Test
  void retriesOfOneCallAreOneSpanThatRecovers() {
    FlakyStore flaky = new FlakyStore(2);
    TracingObjectStore store = new TracingObjectStore(flaky, "cluster", telemetry);
    try (RetryScope scope = RetryScope.open()) {
      for (int attempt = 1; ; attempt++) {
        try {
          store.put("k", PAYLOAD);
          break;
        } catch (SeException e) {
          scope.retrying("unavailable");
        }
      }
    }
    assertThat(spans).hasSize(1);
    SpanData span = spans.get(0);
    assertThat(span.getAttributes().get(SpanFields.IO_RETRY_COUNT)).isEqualTo(2);
    assertThat(span.getAttributes().get(SpanFields.IO_RETRY_ERROR_KIND)).isEqualTo("unavailable");
    assertThat(span.getAttributes().get(SpanFields.ERROR)).isFalse();
    assertThat(span.getStatus().getStatusCode()).isNotEqualTo(io.opentelemetry.api.trace.StatusCode.ERROR);
    assertThat(telemetry.metrics().scrape()).contains(
        "se_objectstore_retries_total{kind=\"unavailable\",operation=\"put\",storage=\"cluster\"} 2.0");
  }

  @Test
  void aCallThatKeepsFailingIsAFailedSpanAndStoreInternalRetriesCount() {
    ObjectStore conflicting = new Forwarding() {
      @Override
      public Optional<String> putIfAbsent(String key, byte[] data) {
        RetryScope.noteRetry("conflict"); // as S3 does on a 409
        throw new SeException(ErrorCode.UNAVAILABLE, "outcome unknown for " + key);
      }
    };
    TracingObjectStore store = new TracingObjectStore(conflicting, "cluster", telemetry);
    assertThatThrownBy(() -> store.putIfAbsent("k", PAYLOAD))
        .isInstanceOf(SeException.class).hasMessage("outcome unknown for k");
    SpanData span = spans.get(0);
    assertThat(span.getAttributes().get(SpanFields.IO_OPERATION)).isEqualTo("put_if_absent");
    assertThat(span.getAttributes().get(SpanFields.IO_RETRY_COUNT)).isEqualTo(1);
    assertThat(span.getAttributes().get(SpanFields.IO_RETRY_ERROR_KIND)).isEqualTo("conflict");
    assertThat(span.getAttributes().get(SpanFields.ERROR)).isTrue();
    assertThat(span.getAttributes().get(SpanFields.ERROR_KIND)).isEqualTo("unavailable");
    assertThat(RetryScope.current()).isNull();
  }

  /** A memory store whose methods a test can override. */
  private static class Forwarding implements ObjectStore {
    private final MemoryObjectStore delegate = new MemoryObjectStore();

    @Override
    public Optional<Blob> get(String key) {
      return delegate.get(key);
    }

    @Override
    public Optional<byte[]> getRange(String key, long offset, int length) {
      return delegate.getRange(key, offset, length);
    }

    @Override
    public Optional<ObjectInfo> head(String key) {
      return delegate.head(key);
    }

    @Override
    public String put(String key, byte[] data) {
      return delegate.put(key, data);
    }

    @Override
    public Optional<String> putIfAbsent(String key, byte[] data) {
      return delegate.putIfAbsent(key, data);
    }

    @Override
    public Optional<String> putIfMatch(String key, byte[] data, String etag) {
      return delegate.putIfMatch(key, data, etag);
    }

    @Override
    public List<ObjectInfo> list(String prefix) {
      return delegate.list(prefix);
    }

    @Override
    public Children listChildren(String prefix) {
      return delegate.listChildren(prefix);
    }

    @Override
    public void delete(String key) {
      delegate.delete(key);
    }

    @Override
    public String describe() {
      return delegate.describe();
    }
  }

  /** Fails the first {@code failures} puts with UNAVAILABLE. */
  private static final class FlakyStore extends Forwarding {
    private final AtomicInteger failuresLeft;

    FlakyStore(int failures) {
      this.failuresLeft = new AtomicInteger(failures);
    }

    @Override
    public String put(String key, byte[] data) {
      if (failuresLeft.getAndDecrement() > 0) {
        throw new SeException(ErrorCode.UNAVAILABLE, "injected failure");
      }
      return super.put(key, data);
    }
  }
}
