package io.storageengine.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.storageengine.common.telemetry.EndedSpanListener;
import io.storageengine.common.telemetry.SpanFields;
import io.storageengine.common.telemetry.Telemetry;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.secretstore.FileSecretStore;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TracingOperationListenerTest {
  @TempDir Path dir;

  private final List<SpanData> spans = new CopyOnWriteArrayList<>();
  private final Telemetry telemetry = Telemetry.builder().spanProcessor(
      new EndedSpanListener(span -> spans.add(span.toSpanData()))).build();
  private TenantCatalogRegistry registry;

  @AfterEach
  void close() {
    if (registry != null) {
      registry.close();
    }
    telemetry.close();
  }

  @Test
  void everyOperationOfARegistryCatalogIsASpanUnderTheCallersSpan() {
    registry = TenantCatalogRegistry.builder(new FileSecretStore(new MemoryObjectStore(), io.storageengine.secretstore.SecretStoreKey.random()))
        .listener(new TracingOperationListener(telemetry)).build();
    registry.create("tenant", CatalogConfig.sql("jdbc:sqlite:" + dir.resolve("c.db"), "file://" + dir.resolve("wh"))
        .withProperties(Map.of("s3.secret-access-key", "hunter2-secret", "token", "tok-123")));
    Catalog catalog = registry.catalog("tenant");

    Span request = telemetry.tracer().spanBuilder("request").startSpan();
    try (Scope ignored = request.makeCurrent()) {
      ((SupportsNamespaces) catalog).createNamespace(Namespace.of("db"));
      Tables.create(catalog, TableIdentifier.of("db", "t"), TableDefinition.builder("id bigint not null").build());
      assertThat(catalog.listTables(Namespace.of("db"))).hasSize(1);
      assertThatThrownBy(() -> catalog.loadTable(TableIdentifier.of("db", "missing")))
          .isInstanceOf(NoSuchTableException.class).hasMessageContaining("db.missing");
    } finally {
      request.end();
    }

    List<SpanData> operations = spans.stream()
        .filter(s -> s.getName().equals(SpanFields.CATALOG_OPERATION)).toList();
    assertThat(operations).extracting(s -> s.getAttributes().get(SpanFields.CATALOG_OPERATION_NAME))
        .containsExactly("createNamespace", "namespaceExists", "createTable", "listTables", "loadTable");
    assertThat(operations).allSatisfy(s -> {
      assertThat(s.getAttributes().get(SpanFields.CATALOG_ID)).isEqualTo("tenant");
      assertThat(s.getTraceId()).isEqualTo(request.getSpanContext().getTraceId());
    });
    SpanData list = operations.stream()
        .filter(s -> "listTables".equals(s.getAttributes().get(SpanFields.CATALOG_OPERATION_NAME))).findFirst().orElseThrow();
    assertThat(list.getParentSpanId()).isEqualTo(request.getSpanContext().getSpanId());
    assertThat(list.getAttributes().get(SpanFields.ERROR)).isFalse();
    SpanData missing = operations.get(operations.size() - 1);
    assertThat(missing.getAttributes().get(SpanFields.CATALOG_OPERATION_NAME)).isEqualTo("loadTable");
    assertThat(missing.getAttributes().get(SpanFields.OUTCOME)).isEqualTo("not_found");
    assertThat(missing.getAttributes().get(SpanFields.ERROR)).isFalse();
    // Neither credentials nor arguments reach span fields.
    for (SpanData span : spans) {
      assertThat(span.getAttributes().asMap().values()).allSatisfy(v -> assertThat(String.valueOf(v))
          .doesNotContain("hunter2").doesNotContain("tok-123").doesNotContain("missing"));
    }
    assertThat(telemetry.metrics().scrape())
        .contains("se_catalog_operation_duration_seconds_count{operation=\"listTables\",outcome=\"ok\"} 1");
  }

  @Test
  void failuresAreMarkedAndReturnedListsCounted() {
    TracingOperationListener listener = new TracingOperationListener(telemetry);
    TracingOperationListener.TracedOperation listed = listener.begin("tenant", "listNamespaces");
    listed.result(List.of(Namespace.of("a"), Namespace.of("b")));
    listed.end(null);
    TracingOperationListener.TracedOperation failed = listener.begin("tenant", "loadTable");
    failed.end(new IllegalStateException("jdbc:postgresql://user:pw@host failed"));

    assertThat(spans.get(0).getAttributes().get(SpanFields.CATALOG_RESULT_COUNT)).isEqualTo(2);
    SpanData failure = spans.get(1);
    assertThat(failure.getAttributes().get(SpanFields.ERROR)).isTrue();
    assertThat(failure.getAttributes().get(SpanFields.ERROR_KIND)).isEqualTo("IllegalStateException");
    assertThat(failure.getAttributes().toString() + failure.getStatus()).doesNotContain("pw@host");
    assertThat(Span.current().getSpanContext().isValid()).isFalse(); // scopes were closed
    assertThat(Optional.ofNullable(failure.getParentSpanContext()).map(c -> c.isValid())).contains(false);
  }
}
