package io.storageengine.wal;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.storageengine.common.telemetry.SpanFields;
import io.storageengine.common.telemetry.Telemetry;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.objectstore.TracingObjectStore;
import io.storageengine.testing.FaultInjectingObjectStore;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The WAL's spans and metrics: one {@code wal.flush} per append, retried store calls counted. */
class WalTelemetryTest {
  private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  private final Telemetry telemetry =
      Telemetry.builder().spanProcessor(SimpleSpanProcessor.create(exporter)).build();

  @AfterEach
  void close() {
    telemetry.close();
  }

  @Test
  void appendIsAFlushSpanWithItsStorageCallsAsChildrenAndRetriesCounted() {
    FaultInjectingObjectStore faults = new FaultInjectingObjectStore(new MemoryObjectStore());
    ObjectStoreWal wal = new ObjectStoreWal(new TracingObjectStore(faults, "cluster", telemetry),
        "writer-1", 3, Duration.ZERO, telemetry);
    TableWal table = new TableWal("warehouse", UUID.randomUUID());
    wal.registerTableName(table, new TableName(List.of("crm"), "customers"));
    exporter.reset();

    faults.failNext(FaultInjectingObjectStore.Operation.PUT_IF_ABSENT, 1);
    byte[] ipc = {1, 2, 3, 4};
    long seq = wal.append(table, List.of(new WalFrame(WalOperation.UPSERT, 0, new long[] {7}, 5, ipc)));

    List<SpanData> spans = exporter.getFinishedSpanItems();
    SpanData flush = spans.stream().filter(s -> s.getName().equals(SpanFields.WAL_FLUSH)).findFirst().orElseThrow();
    assertThat(flush.getAttributes().get(SpanFields.SEGMENT_SEQ)).isEqualTo(seq);
    assertThat(flush.getAttributes().get(SpanFields.ROWS)).isEqualTo(5);
    assertThat(flush.getAttributes().get(SpanFields.FRAMES)).isEqualTo(1);
    assertThat(flush.getAttributes().get(SpanFields.BYTES)).isGreaterThan(ipc.length);
    assertThat(flush.getAttributes().get(SpanFields.CATALOG_ID)).isEqualTo("warehouse");
    assertThat(flush.getAttributes().get(SpanFields.TABLE_UUID)).isEqualTo(table.tableUuid().toString());

    List<SpanData> storage = spans.stream().filter(s -> s.getName().equals(SpanFields.STORAGE_OPERATION)).toList();
    assertThat(storage).isNotEmpty().allSatisfy(
        s -> assertThat(s.getParentSpanId()).isEqualTo(flush.getSpanId()));
    SpanData create = storage.stream()
        .filter(s -> "put_if_absent".equals(s.getAttributes().get(SpanFields.IO_OPERATION))).toList().get(0);
    // The failed attempt and the retry that recovered are one successful call.
    assertThat(storage.stream().filter(s -> "put_if_absent".equals(s.getAttributes().get(SpanFields.IO_OPERATION))))
        .hasSize(1);
    assertThat(create.getAttributes().get(SpanFields.IO_RETRY_COUNT)).isEqualTo(1);
    assertThat(create.getAttributes().get(SpanFields.IO_RETRY_ERROR_KIND)).isEqualTo("unavailable");
    assertThat(create.getAttributes().get(SpanFields.ERROR)).isFalse();
    assertThat(create.getAttributes().get(SpanFields.IO_PATH)).isEqualTo(table.segmentKey(seq));

    String metrics = telemetry.metrics().scrape();
    assertThat(metrics).contains("se_wal_flush_size_bytes_count 1")
        .contains("se_wal_backlog_segments{catalog=\"warehouse\",table=\"crm.customers\"} 1.0")
        .contains("se_objectstore_retries_total{kind=\"unavailable\",operation=\"put_if_absent\",storage=\"cluster\"} 1.0");

    wal.advancePublished(table, seq);
    assertThat(telemetry.metrics().scrape())
        .contains("se_wal_backlog_segments{catalog=\"warehouse\",table=\"crm.customers\"} 0.0")
        .contains("se_wal_backlog_bytes{catalog=\"warehouse\",table=\"crm.customers\"} 0.0")
        .contains("se_freshness_seconds_count 1");
  }
}
