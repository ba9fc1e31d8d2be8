package io.storageengine.stress;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.Json;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * Checks every table against its workload's model through two readers: Flight SQL (the engine's
 * query path) and Iceberg's own generic reader (through the REST facade, reading the data files
 * directly), as ARCHITECTURE.md section 13 asks.
 *
 * <p>Reconciliation publishes the WAL asynchronously, so the verifier first waits until no
 * table's snapshot has changed for {@code settle}, then checks. A check that fails is repeated
 * (after settling again) until {@code timeout}: acknowledged rows still in the WAL show up later.
 * A passing check counts only if no snapshot changed while it ran, so a duplicate published
 * mid-check cannot slip through.
 */
final class Verifier {
  /** The final verdict and the per-table, per-reader results it rests on. */
  record Outcome(boolean passed, List<TableVerification> tables, int attempts, double waitedSeconds) {
    ObjectNode toJson() {
      ObjectNode node = Json.object();
      node.put("result", passed ? "passed" : "failed");
      node.put("attempts", attempts);
      node.put("waited_s", LatencyRecorder.round(waitedSeconds));
      ArrayNode array = node.putArray("tables");
      tables.forEach(t -> array.add(t.toJson()));
      return node;
    }
  }

  private final ServerEndpoint endpoint;
  private final String catalogId;
  private final SqlReader sql;
  private final Duration settle;
  private final Duration timeout;
  private final PrintStream log;

  Verifier(ServerEndpoint endpoint, String catalogId, SqlReader sql, Duration settle,
      Duration timeout, PrintStream log) {
    this.endpoint = endpoint;
    this.catalogId = catalogId;
    this.sql = sql;
    this.settle = settle;
    this.timeout = timeout;
    this.log = log;
  }

  Outcome verify(List<Workload> workloads) throws InterruptedException {
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    int attempts = 0;
    try (RESTCatalog catalog = endpoint.restCatalog(catalogId)) {
      while (true) {
        attempts++;
        List<Long> before = awaitSettled(catalog, workloads, deadline);
        List<TableVerification> results = new ArrayList<>();
        for (Workload w : workloads) {
          results.add(viaFlightSql(w));
          results.add(viaIceberg(catalog, w));
        }
        boolean passed = results.stream().allMatch(TableVerification::passed);
        boolean stable = before.equals(snapshots(catalog, workloads));
        double waited = (System.nanoTime() - start) / 1e9;
        if ((passed && stable) || System.nanoTime() > deadline) {
          return new Outcome(passed && stable, results, attempts, waited);
        }
        if (log != null) {
          log.printf("verification attempt %d: %s; checking again%n", attempts,
              passed ? "a snapshot changed during the check" : firstFailure(results));
        }
        Thread.sleep(1000);
      }
    } catch (IOException e) {
      throw new IllegalStateException("closing the REST catalog client failed", e);
    }
  }

  private static String firstFailure(List<TableVerification> results) {
    for (TableVerification r : results) {
      if (!r.passed()) {
        return r.table() + " via " + r.reader() + ": expected " + r.expected() + ", verified "
            + r.verified() + ", missing " + r.missing() + ", duplicated " + r.duplicated()
            + ", wrong " + r.wrong();
      }
    }
    return "passed";
  }

  /** Waits until no snapshot changed for {@code settle} (or the deadline); returns them. */
  private List<Long> awaitSettled(RESTCatalog catalog, List<Workload> workloads, long deadline)
      throws InterruptedException {
    List<Long> last = snapshots(catalog, workloads);
    long since = System.nanoTime();
    while (System.nanoTime() - since < settle.toNanos() && System.nanoTime() < deadline) {
      Thread.sleep(Math.min(250, Math.max(1, settle.toMillis() / 4)));
      List<Long> now = snapshots(catalog, workloads);
      if (!now.equals(last)) {
        last = now;
        since = System.nanoTime();
      }
    }
    return last;
  }

  private static List<Long> snapshots(RESTCatalog catalog, List<Workload> workloads) {
    List<Long> ids = new ArrayList<>();
    for (Workload w : workloads) {
      Snapshot current = catalog.loadTable(w.table()).currentSnapshot();
      ids.add(current == null ? -1L : current.snapshotId());
    }
    return ids;
  }

  private TableVerification viaFlightSql(Workload w) {
    Workload.ReadBack rows = w.newReadBack();
    try {
      sql.readTable(w.table(), w.readBackColumns(), rows::add);
    } catch (Exception e) {
      return failedRead(w, "flight_sql", e);
    }
    return rows.verify("flight_sql");
  }

  private static TableVerification viaIceberg(RESTCatalog catalog, Workload w) {
    Workload.ReadBack rows = w.newReadBack();
    try {
      Table table = catalog.loadTable(w.table());
      if (table.currentSnapshot() != null) {
        try (CloseableIterable<Record> records =
            IcebergGenerics.read(table).select(w.readBackColumns()).build()) {
          for (Record r : records) {
            rows.add(r);
          }
        }
      }
    } catch (Exception e) {
      return failedRead(w, "iceberg", e);
    }
    return rows.verify("iceberg");
  }

  /** A reader that failed verifies nothing; its error is the problem reported. */
  private static TableVerification failedRead(Workload w, String reader, Exception e) {
    TableVerification empty = w.newReadBack().verify(reader);
    return new TableVerification(w.table().toString(), reader, 0, empty.expected(), 0, 0, 0, 1, 0,
        List.of("read failed: " + Metrics.kind(e) + ": " + e.getMessage()));
  }
}
