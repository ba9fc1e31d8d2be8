package io.storageengine.catalog;

import io.storageengine.common.Threads;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.function.UnaryOperator;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Scan;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Where Iceberg reads and writes a snapshot's manifests for the engine's scans and commits.
 * Iceberg hands that work to its shared worker pool and waits for it by polling every 10 ms
 * ({@code Tasks.waitFor} for each step of a commit, {@code ParallelIterable} for a scan's
 * manifests), so each step costs at least that much however little it does. Measured on this
 * project's 2-core machine: the row delta of a reconcile pass over a 1 M-key table spent 90-110 ms
 * committing (3-8 ms of it in the catalog) against 15-35 ms with its steps on the committing
 * thread; planning a scan of a snapshot with 3 manifests took 13.5 ms against 4.6 ms, with 10
 * manifests 30.5 ms against 6.2 ms. The engine's snapshots list few manifests (Iceberg merges
 * them, maintenance rewrites them), so that work runs on the calling thread; a snapshot listing
 * more than {@link #MAX_MANIFESTS_ON_CALLER} keeps Iceberg's pool, where reading them in parallel
 * pays for the polling.
 */
public final class ManifestThreads {
  /** Manifests a snapshot may list for the work on it to run on the calling thread. */
  public static final int MAX_MANIFESTS_ON_CALLER = 64;

  private static final ExecutorService CALLER = Threads.callingThread();

  private ManifestThreads() {}

  /**
   * {@code update} reading and writing manifests on the calling thread when {@code base} (the
   * snapshot it commits on; null for an empty table) lists at most
   * {@link #MAX_MANIFESTS_ON_CALLER} manifests; otherwise unchanged.
   */
  public static <T extends SnapshotUpdate<T>> T commit(T update, Table table, Snapshot base) {
    return onCaller(table, base) ? update.scanManifestsWith(CALLER).writeManifestsWith(CALLER, 1) : update;
  }

  /**
   * {@code scan} planned on the calling thread when {@code snapshot} (the one it reads; null for
   * none) lists at most {@link #MAX_MANIFESTS_ON_CALLER} manifests; otherwise unchanged.
   */
  public static <T extends Scan<T, ?, ?>> T scan(T scan, Table table, Snapshot snapshot) {
    return onCaller(table, snapshot) ? scan.planWith(CALLER) : scan;
  }

  /**
   * The scan tasks of {@code snapshot}'s data files, each with its delete files (none when
   * {@code snapshot} is null: an empty table), planned as {@link #scan} says by a scan of the
   * table that {@code configure} may narrow (a filter, column statistics) or leave as it is.
   */
  public static List<FileScanTask> tasks(Table table, Snapshot snapshot, UnaryOperator<TableScan> configure) {
    List<FileScanTask> out = new ArrayList<>();
    if (snapshot == null) {
      return out;
    }
    try (CloseableIterable<FileScanTask> tasks = configure.apply(scan(table.newScan(), table, snapshot)
        .useSnapshot(snapshot.snapshotId())).planFiles()) {
      tasks.forEach(out::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  private static boolean onCaller(Table table, Snapshot snapshot) {
    return snapshot == null || snapshot.allManifests(table.io()).size() <= MAX_MANIFESTS_ON_CALLER;
  }
}
