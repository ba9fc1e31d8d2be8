package io.storageengine.catalog.rest;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.storageengine.common.telemetry.Metrics;
import io.storageengine.common.telemetry.Telemetry;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.metrics.CommitMetricsResult;
import org.apache.iceberg.metrics.CommitReport;
import org.apache.iceberg.metrics.CounterResult;
import org.apache.iceberg.metrics.MetricsReport;
import org.apache.iceberg.metrics.ScanMetricsResult;
import org.apache.iceberg.metrics.ScanReport;
import org.apache.iceberg.metrics.TimerResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records the metrics reports REST clients send after each scan and commit
 * ({@code POST .../tables/{t}/metrics}) in the server's metrics registry, per catalog and table:
 *
 * <ul>
 *   <li>{@code se.iceberg.client.scans} (count), {@code se.iceberg.client.scan.planning.duration}
 *       (timer), {@code se.iceberg.client.scan.data.files} and
 *       {@code se.iceberg.client.scan.bytes} (what the scans planned to read);</li>
 *   <li>{@code se.iceberg.client.commits{operation}} (count),
 *       {@code se.iceberg.client.commit.duration} (timer), {@code se.iceberg.client.commit.records}
 *       (records added).</li>
 * </ul>
 * Every report is also logged at DEBUG. Reports of other kinds are only logged.
 */
final class ClientMetricsRecorder {
  private static final Logger LOG = LoggerFactory.getLogger(ClientMetricsRecorder.class);

  private final Telemetry telemetry;

  /** Records into {@code telemetry}'s metrics. */
  ClientMetricsRecorder(Telemetry telemetry) {
    this.telemetry = java.util.Objects.requireNonNull(telemetry, "telemetry");
  }

  /** Records {@code report}, sent for {@code table} of {@code catalogId}. */
  void record(String catalogId, TableIdentifier table, MetricsReport report) {
    LOG.debug("catalog {} table {}: client metrics report {}", catalogId, table, report);
    MeterRegistry registry = telemetry.metrics().registry();
    Tags tags = Tags.of("catalog", catalogId,
        "table", Metrics.tableLabel(java.util.List.of(table.namespace().levels()), table.name()));
    if (report instanceof ScanReport scan) {
      Counter.builder("se.iceberg.client.scans").description("table scans reported by REST clients")
          .tags(tags).register(registry).increment();
      ScanMetricsResult m = scan.scanMetrics();
      if (m != null) {
        timer(registry, "se.iceberg.client.scan.planning.duration", "scan planning time reported by REST clients",
            tags, m.totalPlanningDuration());
        counter(registry, "se.iceberg.client.scan.data.files", "data files planned by client scans",
            tags, m.resultDataFiles());
        counter(registry, "se.iceberg.client.scan.bytes", "data file bytes planned by client scans",
            tags, m.totalFileSizeInBytes());
      }
    } else if (report instanceof CommitReport commit) {
      Counter.builder("se.iceberg.client.commits").description("table commits reported by REST clients")
          .tags(tags).tag("operation", commit.operation() == null ? "unknown" : commit.operation())
          .register(registry).increment();
      CommitMetricsResult m = commit.commitMetrics();
      if (m != null) {
        timer(registry, "se.iceberg.client.commit.duration", "commit time reported by REST clients",
            tags, m.totalDuration());
        counter(registry, "se.iceberg.client.commit.records", "records added by client commits",
            tags, m.addedRecords());
      }
    }
  }

  private static void timer(MeterRegistry registry, String name, String description, Tags tags, TimerResult result) {
    if (result != null && result.count() > 0) {
      Timer.builder(name).description(description).tags(tags).register(registry)
          .record(result.totalDuration().toNanos(), TimeUnit.NANOSECONDS);
    }
  }

  private static void counter(MeterRegistry registry, String name, String description, Tags tags,
      CounterResult result) {
    if (result != null && result.value() > 0) {
      Counter.builder(name).description(description).tags(tags).register(registry).increment(result.value());
    }
  }
}
