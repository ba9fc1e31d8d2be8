package io.storageengine.common.telemetry;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.ToDoubleFunction;

/**
 * The engine's Prometheus metrics: named meters with helpers for the places that feed them.
 * Helpers are cheap (a map lookup and an atomic add) and never throw. Names are Micrometer
 * names; Prometheus sees them with dots as underscores and a unit suffix
 * ({@code se.ingest.rows} is {@code se_ingest_rows_total}, timers end in {@code _seconds}).
 *
 * <p>Per-table meters are tagged {@code catalog} and {@code table} ({@code namespace.name}).
 */
public final class Metrics implements AutoCloseable {
  /** What {@link #scrape()} returns: the Prometheus text exposition format. */
  public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  private static final Duration LATENCY_MIN = Duration.ofMillis(1);
  private static final Duration LATENCY_MAX = Duration.ofMinutes(10);

  private final PrometheusMeterRegistry registry;
  private final JvmGcMetrics gc;
  private final ConcurrentMap<Tags, IngestMeters> ingest = new ConcurrentHashMap<>();
  private final ConcurrentMap<Tags, AtomicLong[]> backlog = new ConcurrentHashMap<>();
  private final ConcurrentMap<Tags, AtomicLong[]> reconcileHealth = new ConcurrentHashMap<>();
  private final ConcurrentMap<Tags, AtomicLong> slicePositions = new ConcurrentHashMap<>();
  private final Timer ackLatency;
  private final Timer walFlushLatency;
  private final DistributionSummary walFlushSize;
  private final Timer freshness;

  private record IngestMeters(Counter rows, Counter bytes, Counter batches) {}

  /** A registry with the engine's meters and the JVM's (memory, GC, threads, CPU, uptime). */
  public Metrics() {
    this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new JvmMemoryMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    this.gc = new JvmGcMetrics();
    gc.bindTo(registry);
    this.ackLatency = latency("se.ingest.ack.latency",
        "time from receiving a batch to acknowledging it as durable");
    this.walFlushLatency = latency("se.wal.flush.latency", "time to write one WAL segment");
    this.walFlushSize = DistributionSummary.builder("se.wal.flush.size")
        .description("size of one WAL segment").baseUnit("bytes")
        .publishPercentileHistogram().minimumExpectedValue(1024.0).maximumExpectedValue(1024.0 * 1024 * 1024)
        .register(registry);
    this.freshness = latency("se.freshness",
        "time from a batch's acknowledgement to the Iceberg commit that holds it");
  }

  /** The registry, to bind more meters (the HTTP server's own). */
  public MeterRegistry registry() {
    return registry;
  }

  /** Every meter in the Prometheus text format. */
  public String scrape() {
    return registry.scrape();
  }

  // ---- ingestion ----

  /** One accepted batch of {@code rows} rows, {@code bytes} Arrow bytes, for a table. */
  public void ingestBatch(String catalog, String table, long rows, long bytes) {
    IngestMeters m = ingest.computeIfAbsent(tableTags(catalog, table), tags -> new IngestMeters(
        Counter.builder("se.ingest.rows").description("rows accepted").tags(tags).register(registry),
        Counter.builder("se.ingest.bytes").description("Arrow bytes accepted").baseUnit("bytes")
            .tags(tags).register(registry),
        Counter.builder("se.ingest.batches").description("batches accepted").tags(tags).register(registry)));
    m.rows().increment(rows);
    m.bytes().increment(bytes);
    m.batches().increment();
  }

  /** A rejected batch or stream; {@code reason} is an error kind ({@code invalid_argument}). */
  public void ingestRejected(String catalog, String table, String reason) {
    Counter.builder("se.ingest.rejections").description("batches or streams rejected")
        .tags(tableTags(catalog, table)).tag("reason", value(reason)).register(registry).increment();
  }

  /** Time from receiving a batch to its acknowledgement. */
  public void ackLatency(long nanos) {
    ackLatency.record(nanos, TimeUnit.NANOSECONDS);
  }

  // ---- WAL ----

  /** One WAL segment of {@code bytes} bytes written in {@code nanos}. */
  public void walFlush(long bytes, long nanos) {
    walFlushSize.record(bytes);
    walFlushLatency.record(nanos, TimeUnit.NANOSECONDS);
  }

  /** The table's unpublished WAL segments and their bytes, as last observed by this process. */
  public void walBacklog(String catalog, String table, long segments, long bytes) {
    AtomicLong[] values = backlog.computeIfAbsent(tableTags(catalog, table), tags -> {
      AtomicLong[] v = {new AtomicLong(), new AtomicLong()};
      Gauge.builder("se.wal.backlog.segments", v[0], AtomicLong::get)
          .description("WAL segments not yet committed to Iceberg").tags(tags).register(registry);
      Gauge.builder("se.wal.backlog.bytes", v[1], AtomicLong::get).baseUnit("bytes")
          .description("bytes of WAL segments not yet committed to Iceberg").tags(tags).register(registry);
      return v;
    });
    values[0].set(Math.max(0, segments));
    values[1].set(Math.max(0, bytes));
  }

  // ---- reconciliation ----

  /** One reconcile pass of a table: {@code outcome} (committed, nothing, conflict, failed), rows committed. */
  public void reconcilePass(String catalog, String table, String outcome, long rows, long nanos) {
    Timer.builder("se.reconcile.duration").description("duration of one reconcile pass of a table")
        .tag("outcome", value(outcome)).publishPercentileHistogram()
        .minimumExpectedValue(LATENCY_MIN).maximumExpectedValue(LATENCY_MAX)
        .register(registry).record(nanos, TimeUnit.NANOSECONDS);
    if (rows > 0) {
      Counter.builder("se.reconcile.rows").description("WAL rows committed to Iceberg")
          .tags(tableTags(catalog, table)).register(registry).increment(rows);
    }
  }

  /**
   * One pass of slice {@code slice} of a sliced table: the WAL rows it committed
   * ({@code se_reconcile_slice_rows_total}) and, when it committed, the WAL seq the slice has
   * reached ({@code se_reconcile_slice_wal_seq}; -1 leaves it as it was). A slice's lag is the
   * table's newest WAL seq less this.
   */
  public void reconcileSlice(String catalog, String table, int slice, long rows, long walSeq) {
    Tags tags = tableTags(catalog, table).and("slice", Integer.toString(slice));
    if (rows > 0) {
      Counter.builder("se.reconcile.slice.rows").description("WAL rows a slice's passes committed to Iceberg")
          .tags(tags).register(registry).increment(rows);
    }
    AtomicLong position = slicePositions.computeIfAbsent(tags, t -> {
      AtomicLong v = new AtomicLong(-1);
      Gauge.builder("se.reconcile.slice.wal.seq", v, AtomicLong::get)
          .description("the WAL seq a slice's committed passes have reached (-1: none seen yet)")
          .tags(t).register(registry);
      return v;
    });
    if (walSeq >= 0) {
      position.accumulateAndGet(walSeq, Math::max);
    }
  }

  /**
   * The key indexes of entity tables a reconciler keeps ({@code indexes}, weakly referenced):
   * how many ({@code se_reconcile_key_indexes}), their bytes ({@code se_reconcile_key_index_bytes}),
   * and the passes that built one ({@code se_reconcile_key_index_builds_total}) or reused one
   * ({@code se_reconcile_key_index_reuses_total}).
   */
  public <T> void reconcileKeyIndexes(T indexes, ToDoubleFunction<T> count, ToDoubleFunction<T> bytes,
      ToDoubleFunction<T> builds, ToDoubleFunction<T> reuses) {
    Gauge.builder("se.reconcile.key.indexes", indexes, count)
        .description("key indexes of entity tables kept between reconcile passes").register(registry);
    Gauge.builder("se.reconcile.key.index.bytes", indexes, bytes).baseUnit("bytes")
        .description("memory taken by the key indexes kept between reconcile passes").register(registry);
    FunctionCounter.builder("se.reconcile.key.index.builds", indexes, builds)
        .description("entity passes that built their table's key index from its files").register(registry);
    FunctionCounter.builder("se.reconcile.key.index.reuses", indexes, reuses)
        .description("entity passes that reused their table's key index").register(registry);
  }

  /**
   * Whether the table's reconciliation is failing (1) or healthy (0), and its failed passes since
   * the last successful one: {@code se_reconcile_table_failing} and
   * {@code se_reconcile_table_consecutive_failures}.
   */
  public void reconcileTableHealth(String catalog, String table, boolean failing,
      long consecutiveFailures) {
    AtomicLong[] values = reconcileHealth.computeIfAbsent(tableTags(catalog, table), tags -> {
      AtomicLong[] v = {new AtomicLong(), new AtomicLong()};
      Gauge.builder("se.reconcile.table.failing", v[0], AtomicLong::get)
          .description("1 while the table's reconcile passes keep failing").tags(tags).register(registry);
      Gauge.builder("se.reconcile.table.consecutive.failures", v[1], AtomicLong::get)
          .description("failed reconcile passes of the table since its last successful one")
          .tags(tags).register(registry);
      return v;
    });
    values[0].set(failing ? 1 : 0);
    values[1].set(Math.max(0, consecutiveFailures));
  }

  /** Time from the acknowledgement of the oldest batch of a commit to the commit. */
  public void freshness(Duration ackToCommit) {
    freshness.record(ackToCommit.isNegative() ? Duration.ZERO : ackToCommit);
  }

  // ---- queries and Flight calls ----

  /**
   * One Flight call: {@code method} (DoGet, DoPut, GetFlightInfo, ...), {@code kind} (ingest,
   * bulk_ingest, query, metadata, other) and gRPC {@code status} ({@code OK}, ...). Calls of kind
   * {@code query} also count as queries.
   */
  public void flightCall(String method, String kind, String status, long nanos) {
    Counter.builder("se.flight.calls").description("Flight calls")
        .tag("method", value(method)).tag("kind", value(kind)).tag("status", value(status))
        .register(registry).increment();
    Timer.builder("se.flight.duration").description("duration of Flight calls, streams included")
        .tag("method", value(method)).tag("kind", value(kind)).register(registry)
        .record(nanos, TimeUnit.NANOSECONDS);
    if ("query".equals(kind)) {
      query(method, status, nanos);
    }
  }

  /** One query call (planning or streaming a statement's results). */
  public void query(String method, String status, long nanos) {
    Counter.builder("se.query.requests").description("query calls").tag("method", value(method))
        .register(registry).increment();
    Timer.builder("se.query.duration").description("duration of query calls, result streams included")
        .tag("method", value(method)).publishPercentileHistogram()
        .minimumExpectedValue(LATENCY_MIN).maximumExpectedValue(LATENCY_MAX)
        .register(registry).record(nanos, TimeUnit.NANOSECONDS);
    if (!"OK".equals(status)) {
      Counter.builder("se.query.errors").description("query calls that failed")
          .tag("method", value(method)).tag("status", value(status)).register(registry).increment();
    }
  }

  // ---- catalogs and object stores ----

  /** One operation of a tenant catalog. */
  public void catalogOperation(String operation, boolean failed, long nanos) {
    Timer.builder("se.catalog.operation.duration").description("operations on tenant catalogs")
        .tag("operation", value(operation)).tag("outcome", failed ? "error" : "ok")
        .register(registry).record(nanos, TimeUnit.NANOSECONDS);
  }

  /** One object-store call (all its retries included) and the retries it took. */
  public void storageOperation(String storage, String operation, boolean failed, int retries,
      String retryKind, long nanos) {
    Timer.builder("se.objectstore.operation.duration").description("object-store calls, retries included")
        .tag("storage", value(storage)).tag("operation", value(operation))
        .tag("outcome", failed ? "error" : "ok").register(registry).record(nanos, TimeUnit.NANOSECONDS);
    if (retries > 0) {
      Counter.builder("se.objectstore.retries").description("object-store attempts that were retried")
          .tag("storage", value(storage)).tag("operation", value(operation)).tag("kind", value(retryKind))
          .register(registry).increment(retries);
    }
  }

  // ---- memory ----

  /** Reports an Arrow allocator's allocated and peak bytes under {@code se.arrow.memory}. */
  public void arrowAllocator(String name, LongSupplier allocated, LongSupplier peak) {
    Gauge.builder("se.arrow.memory.allocated", allocated::getAsLong).baseUnit("bytes")
        .description("bytes allocated by an Arrow allocator").tag("allocator", name).register(registry);
    Gauge.builder("se.arrow.memory.peak", peak::getAsLong).baseUnit("bytes")
        .description("peak bytes allocated by an Arrow allocator").tag("allocator", name).register(registry);
  }

  @Override
  public void close() {
    gc.close();
    registry.close();
  }

  private Timer latency(String name, String description) {
    return Timer.builder(name).description(description).publishPercentileHistogram()
        .minimumExpectedValue(LATENCY_MIN).maximumExpectedValue(LATENCY_MAX).register(registry);
  }

  /** The {@code table} tag of a table: its namespace levels and name joined by dots. */
  public static String tableLabel(List<String> namespace, String name) {
    return namespace == null || namespace.isEmpty() ? name : String.join(".", namespace) + "." + name;
  }

  private static Tags tableTags(String catalog, String table) {
    return Tags.of("catalog", value(catalog), "table", value(table));
  }

  private static String value(String tag) {
    return tag == null || tag.isEmpty() ? "unknown" : tag;
  }
}
