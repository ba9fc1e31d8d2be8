package io.storageengine.stress;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.catalog.Tables;
import io.storageengine.catalog.TableSettings;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * A running load: the workloads (one per table), their producers, the freshness probe and the
 * live progress line. {@link #start} and {@link #stop} bracket the load; afterwards
 * {@link #summary} and {@link Verifier} report on it.
 */
final class LoadSession implements AutoCloseable {
  private final LoadConfig config;
  private final ServerEndpoint endpoint;
  private final BufferAllocator allocator;
  private final SqlReader sql;
  private final SqlReader probeSql;
  private final List<Workload> workloads = new ArrayList<>();
  private final List<FreshnessTracker> trackers = new ArrayList<>();
  private final Metrics metrics = new Metrics();
  private final AtomicBoolean stop = new AtomicBoolean();
  private final List<Thread> producers = new ArrayList<>();
  private final PrintStream progressOut;
  private volatile boolean probing = true;
  private Thread probe;
  private Thread progress;
  private long startNanos;
  private long stopNanos;
  /** Identifies this run in the producer ids. */
  private final long run;

  /**
   * @param allocator parent of every Arrow buffer of the session; closed by the caller after
   *     this session
   * @param progressOut where the live progress line goes (stderr), or null for none
   */
  LoadSession(LoadConfig config, ServerEndpoint endpoint, BufferAllocator allocator,
      PrintStream progressOut) {
    this.config = config;
    this.endpoint = endpoint;
    this.allocator = allocator;
    this.progressOut = progressOut;
    this.sql = new SqlReader(allocator, endpoint, config.catalogId(), Duration.ofMinutes(5));
    this.probeSql = new SqlReader(allocator, endpoint, config.catalogId(), Duration.ofSeconds(10));
    // Row ids and versions start above those of every earlier run against the same tables.
    long base = System.currentTimeMillis() * 1_000_000L;
    this.run = base;
    Namespace namespace = Namespace.of(config.namespace().split("\\."));
    for (int t = 0; t < config.tables(); t++) {
      TableIdentifier id = TableIdentifier.of(namespace,
          config.tablePrefix() + "_" + config.mode() + "_" + t);
      workloads.add(config.entity()
          ? new EntityWorkload(id, base, config.keySpace(), config.updateRatio(),
              config.deleteRatio(), config.rowBytes())
          : new AppendWorkload(id, base, config.rowBytes()));
      trackers.add(new FreshnessTracker(metrics.freshness, config.pointProbe()));
    }
  }

  List<Workload> workloads() {
    return workloads;
  }

  Metrics metrics() {
    return metrics;
  }

  SqlReader sql() {
    return sql;
  }

  /** Creates missing tables; an existing table must have the mode of this run. */
  void createTables() {
    try (RESTCatalog catalog = endpoint.restCatalog(config.catalogId())) {
      for (Workload w : workloads) {
        try {
          Tables.create(catalog, w.table(), w.definition());
        } catch (SeException e) {
          if (e.code() != ErrorCode.ALREADY_EXISTS) {
            throw e;
          }
          requireMode(catalog.loadTable(w.table()), w);
        }
      }
    } catch (java.io.IOException e) {
      throw SeException.unavailable("closing the REST catalog client failed", e);
    }
  }

  /**
   * Checks, without creating anything, that every table of the run exists with the mode of this
   * run; a missing table fails at once naming it and saying what to do.
   */
  void requireTables() {
    try (RESTCatalog catalog = endpoint.restCatalog(config.catalogId())) {
      for (Workload w : workloads) {
        Table existing;
        try {
          existing = catalog.loadTable(w.table());
        } catch (org.apache.iceberg.exceptions.NoSuchTableException
            | org.apache.iceberg.exceptions.NoSuchNamespaceException e) {
          throw SeException.notFound("table %s does not exist in catalog '%s': create it or pass --create-tables",
              w.table(), config.catalogId());
        }
        requireMode(existing, w);
      }
    } catch (java.io.IOException e) {
      throw SeException.unavailable("closing the REST catalog client failed", e);
    }
  }

  private void requireMode(Table existing, Workload w) {
    String mode = TableSettings.of(existing).mode().propertyValue();
    if (!mode.equals(config.mode())) {
      throw SeException.invalid("table `%s` exists as an %s table, not %s", w.table(), mode, config.mode());
    }
  }

  void start() {
    startNanos = System.nanoTime();
    RateLimiter rate = new RateLimiter(config.rate());
    int n = 0;
    for (int t = 0; t < workloads.size(); t++) {
      for (int p = 0; p < config.concurrency(); p++) {
        Producer producer = new Producer(run, n, workloads.get(t),
            () -> endpoint.ingestClient(allocator), allocator,
            config.catalogId(), config.batchRows(), config.window(), rate, metrics,
            trackers.get(t), stop, config.seed() * 1_000_003L + n);
        Thread thread = new Thread(producer, "se-stress-producer-" + n);
        thread.setDaemon(true);
        producers.add(thread);
        n++;
      }
    }
    producers.forEach(Thread::start);
    probe = daemon("se-stress-freshness", this::probeLoop);
    if (progressOut != null) {
      progress = daemon("se-stress-progress", this::progressLoop);
    }
  }

  /**
   * Stops the producers and waits until every batch they sent is acknowledged (they keep
   * resending for up to {@link Producer#DRAIN_TIMEOUT_NANOS}) or unknown.
   */
  void stop() throws InterruptedException {
    stop.set(true);
    for (Thread t : producers) {
      t.join();
    }
    stopNanos = System.nanoTime();
    if (progress != null) {
      progress.interrupt();
      progress.join();
      printProgress(); // the final figures
    }
  }

  /** Stops the freshness probe (after verification waited for the last batches to show). */
  void stopProbe() throws InterruptedException {
    probing = false;
    if (probe != null) {
      probe.interrupt();
      probe.join();
      probe = null;
    }
  }

  private Thread daemon(String name, Runnable body) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  private void probeLoop() {
    // gRPC may swallow an interrupt while a query is running, so a flag ends the loop too.
    while (probing && !Thread.currentThread().isInterrupted()) {
      for (int t = 0; t < workloads.size(); t++) {
        Workload w = workloads.get(t);
        try {
          if (config.pointProbe()) {
            probePoint(w, trackers.get(t));
            continue;
          }
          Long max = probeSql.queryLong("SELECT max(" + w.freshnessColumn() + ") FROM "
              + SqlReader.sqlName(w.table()));
          if (max != null) {
            trackers.get(t).observed(max, System.nanoTime());
          }
        } catch (InterruptedException e) {
          return;
        } catch (Exception e) {
          if (!probing || Thread.currentThread().isInterrupted()) {
            return;
          }
          metrics.error("probe", e);
        }
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /**
   * One point probe: the last acknowledged upsert batch's first key read alone until it shows the
   * batch's version (or a later one), at most 10 s (then counted as a probe error).
   */
  private void probePoint(Workload w, FreshnessTracker tracker) throws Exception {
    long[] point = tracker.takePoint();
    if (point == null) {
      return;
    }
    String sql = "SELECT max(" + w.freshnessColumn() + ") FROM " + SqlReader.sqlName(w.table())
        + " WHERE \"key\" = " + point[0];
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (probing) {
      Long version = probeSql.queryLong(sql);
      if (version != null && version >= point[1]) {
        tracker.observedPoint(point, System.nanoTime());
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("key " + point[0] + " did not show version " + point[1] + " within 10 s");
      }
    }
  }

  /** The span of each window of the freshness report. */
  private static final long FRESHNESS_WINDOW_NANOS = Duration.ofSeconds(20).toNanos();

  private long lastRows;
  private long lastBytes;
  private long lastNanos;

  private void progressLoop() {
    lastNanos = startNanos;
    while (true) {
      try {
        Thread.sleep(1000);
      } catch (InterruptedException e) {
        return;
      }
      printProgress();
    }
  }

  private synchronized void printProgress() {
    long now = System.nanoTime();
    long rows = metrics.rowsAcked.sum();
    long bytes = metrics.bytesAcked.sum();
    double seconds = Math.max(1e-3, (now - lastNanos) / 1e9);
    progressOut.printf(Locale.ROOT,
        "[%5.0fs] sent %d acked %d unknown %d | %.0f rows/s %.2f MB/s | ack p50 %.0f ms p99 %.0f ms"
            + " | fresh p50 %.0f ms | errors %d%n",
        (now - startNanos) / 1e9, metrics.rowsSent.sum(), rows, metrics.rowsUnknown.sum(),
        (rows - lastRows) / seconds, (bytes - lastBytes) / seconds / 1e6,
        metrics.ackLatency.percentileMillis(50), metrics.ackLatency.percentileMillis(99),
        metrics.freshness.percentileMillis(50), metrics.errorCount());
    lastRows = rows;
    lastBytes = bytes;
    lastNanos = now;
  }

  /** Figures of the load (verification is added by the caller). */
  ObjectNode summary() {
    double seconds = Math.max(1e-9, ((stopNanos == 0 ? System.nanoTime() : stopNanos) - startNanos) / 1e9);
    ObjectNode node = Json.object();
    node.put("mode", config.mode());
    node.put("tables", config.tables());
    node.put("concurrency", config.concurrency());
    node.put("batch_rows", config.batchRows());
    node.put("row_bytes", config.rowBytes());
    node.put("duration_s", LatencyRecorder.round(seconds));
    node.put("rows_sent", metrics.rowsSent.sum());
    node.put("rows_acked", metrics.rowsAcked.sum());
    node.put("rows_unknown", metrics.rowsUnknown.sum());
    node.put("batches_acked", metrics.batchesAcked.sum());
    node.put("batches_unknown", metrics.batchesUnknown.sum());
    node.put("batches_resent", metrics.batchesResent.sum());
    node.put("reconnects", metrics.reconnects.sum());
    node.put("duplicate_acks", metrics.duplicateAcks.sum());
    ObjectNode throughput = node.putObject("throughput");
    throughput.put("rows_per_s", Math.round(metrics.rowsAcked.sum() / seconds));
    throughput.put("mb_per_s", Math.round(metrics.bytesAcked.sum() / seconds / 1e4) / 100.0);
    node.set("ack_latency_ms", metrics.ackLatency.toJson(50, 95, 99, 100));
    ObjectNode fresh = metrics.freshness.toJson(50, 99);
    fresh.put("probe", config.pointProbe() ? "point" : "max");
    fresh.put("unresolved_batches", trackers.stream().mapToInt(FreshnessTracker::unresolved).sum());
    // By ack time: a run's first seconds (a compaction or key index sync left from the load
    // before, a cold JIT) apart from its steady state.
    fresh.set("windows", metrics.freshness.windowsJson(startNanos, FRESHNESS_WINDOW_NANOS));
    node.set("freshness_ms", fresh);
    node.set("errors", metrics.errorsJson());
    return node;
  }

  @Override
  public void close() throws Exception {
    stop.set(true);
    stopProbe();
    try {
      probeSql.close();
    } finally {
      sql.close();
    }
  }
}
