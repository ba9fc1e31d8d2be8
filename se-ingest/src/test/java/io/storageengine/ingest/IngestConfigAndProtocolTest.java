package io.storageengine.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.storageengine.wal.WalOperation;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.arrow.flight.FlightDescriptor;
import org.junit.jupiter.api.Test;

class IngestConfigAndProtocolTest {
  @Test
  void defaultsArePinned() {
    IngestConfig config = IngestConfig.defaults();
    assertThat(config.flushInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(config.flushBytes()).isEqualTo(64L * 1024 * 1024);
    assertThat(config.maxUnacknowledgedBatches()).isEqualTo(32);
    assertThat(config.maxStreamBytes()).isEqualTo(256L * 1024 * 1024);
    assertThat(config.globalBytes()).isEqualTo(1024L * 1024 * 1024);
    assertThat(config.flushThreads()).isEqualTo(4);
    assertThat(config.withFlushBytes(5).flushBytes()).isEqualTo(5);
    assertThat(config.withMaxUnacknowledgedBatches(3).maxUnacknowledgedBatches()).isEqualTo(3);
  }

  @Test
  void invalidValuesAreRefusedNamingTheOption() {
    assertThatThrownBy(() -> IngestConfig.defaults().withFlushInterval(Duration.ZERO))
        .hasMessage("ingest.flush-interval must be positive, got PT0S");
    assertThatThrownBy(() -> IngestConfig.defaults().withFlushBytes(0))
        .hasMessage("ingest.flush-bytes must be positive, got 0");
    assertThatThrownBy(() -> IngestConfig.defaults().withGlobalBytes(-1))
        .hasMessage("ingest.global-bytes must be positive, got -1");
  }

  @Test
  void nativeDescriptorIsRecognisedByItsTypeUrl() {
    assertThat(IngestService.isNativeIngest(IngestProtocol.descriptor())).isTrue();
    FlightDescriptor other = FlightDescriptor.command(Any.newBuilder()
        .setTypeUrl("type.googleapis.com/arrow.flight.protocol.sql.CommandStatementIngest")
        .setValue(ByteString.EMPTY).build().toByteArray());
    assertThat(IngestService.isNativeIngest(other)).isFalse();
    assertThat(IngestService.isNativeIngest(FlightDescriptor.path("a", "b"))).isFalse();
    assertThat(IngestService.isNativeIngest(
        FlightDescriptor.command("not protobuf".getBytes(StandardCharsets.UTF_8)))).isFalse();
  }

  @Test
  void headerRoundTrips() {
    IngestProtocol.Header header =
        new IngestProtocol.Header("tenant", List.of("a", "b"), "t", WalOperation.DELETE);
    try (var allocator = new org.apache.arrow.memory.RootAllocator();
        var buf = allocator.buffer(256)) {
      byte[] json = IngestProtocol.encodeHeader(header);
      buf.writeBytes(json);
      assertThat(new String(json, StandardCharsets.UTF_8)).isEqualTo("{\"request_id\":0,"
          + "\"catalog\":\"tenant\",\"namespace\":[\"a\",\"b\"],\"table_name\":\"t\","
          + "\"operation\":\"delete\"}");
      assertThat(IngestProtocol.parseHeader(buf)).isEqualTo(header);
    }
  }
}
