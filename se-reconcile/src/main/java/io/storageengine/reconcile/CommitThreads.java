package io.storageengine.reconcile;

import io.storageengine.common.Threads;
import java.util.concurrent.ExecutorService;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;

/**
 * Where the Iceberg commit of a reconcile pass reads and writes its manifests. Iceberg hands each
 * step of a commit that reads or writes manifests (filtering the manifests of replaced deletes,
 * merging, writing the new ones) to its shared worker pool and waits for the step by polling every
 * 10 ms ({@code Tasks.waitFor}), so each step costs at least that much however little it does:
 * the row delta of a pass over a 1 M-key table spent 90-110 ms committing, 3-8 ms of it in the
 * catalog, against 20-40 ms with those steps run on the committing thread. A pass commits one or
 * a few data files and their deletion vectors, so its steps are small unless the table lists many
 * manifests: a snapshot with more than {@link #MAX_MANIFESTS_ON_CALLER} keeps Iceberg's pool,
 * where reading them in parallel pays for the polling.
 */
final class CommitThreads {
  /** Manifests a base snapshot may list for its commit to run on the committing thread. */
  static final int MAX_MANIFESTS_ON_CALLER = 64;

  private static final ExecutorService CALLER = Threads.callingThread();

  private CommitThreads() {}

  /**
   * {@code update} reading and writing manifests on the calling thread when {@code base} (the
   * snapshot it commits on; null for an empty table) lists at most
   * {@link #MAX_MANIFESTS_ON_CALLER} manifests; otherwise unchanged.
   */
  static <T extends SnapshotUpdate<T>> T onCaller(T update, Table table, Snapshot base) {
    if (base != null && base.allManifests(table.io()).size() > MAX_MANIFESTS_ON_CALLER) {
      return update;
    }
    return update.scanManifestsWith(CALLER).writeManifestsWith(CALLER, 1);
  }
}
