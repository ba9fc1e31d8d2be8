package io.storageengine.reconcile.maintenance;

import io.storageengine.wal.TableWal;
import java.util.List;

/**
 * What one maintenance pass over one table did.
 *
 * @param tableName the table's name when it was found, else null
 * @param compaction data files rewritten by compaction
 * @param manifestsBefore data and delete manifests of the current snapshot before the pass
 * @param manifestsAfter the same after the pass
 * @param snapshotsExpired snapshots removed by expiry (their unreferenced files deleted)
 * @param orphanFilesDeleted files under the table location no snapshot referenced
 * @param walSegmentsDeleted WAL segments garbage-collected
 * @param walGcSeq the table's {@code gc_seq} after the pass
 * @param tombstones expired tombstones removed from storage
 * @param errors one message per step that failed ({@code "step: message"}); other steps ran
 * @param millis duration of the pass
 * @param sliceChanges the splits and merges of a sliced table's slices committed
 *     ({@code "split [0] -> [2, 3]"})
 */
public record MaintenanceResult(
    TableWal table,
    String tableName,
    Outcome outcome,
    Compaction compaction,
    int manifestsBefore,
    int manifestsAfter,
    int snapshotsExpired,
    int orphanFilesDeleted,
    int walSegmentsDeleted,
    long walGcSeq,
    Tombstones tombstones,
    List<String> errors,
    long millis,
    List<String> sliceChanges) {

  public enum Outcome {
    /** Every step ran (each may have found nothing to do). */
    MAINTAINED,
    /** Some steps failed; see {@link #errors()}. The others ran. */
    PARTIAL,
    /** {@code se.maintenance.enabled=false}. */
    DISABLED,
    /** No table of the catalog has the WAL's UUID any more. */
    TABLE_DROPPED,
    /** The table could not be loaded or its policy is invalid; nothing ran. */
    FAILED
  }

  /**
   * @param groups partitions (or parts of one) rewritten, one commit each
   * @param dataFilesRemoved small or delete-heavy data files replaced
   * @param dataFilesAdded files written in their place
   * @param deleteVectorsFolded deletion vectors removed with the files they applied to
   * @param rowsRewritten live rows copied into the new files
   * @param conflicts rewrites dropped because a concurrent commit rewrote their files or deleted
   *     rows from them in a way that could not be carried onto the new files
   * @param rowsCarried rows deleted from the inputs by passes while the rewrite ran, deleted from
   *     the new files too by the rewrite's commit (among {@code rowsRewritten})
   */
  public record Compaction(int groups, int dataFilesRemoved, int dataFilesAdded, int deleteVectorsFolded,
      long rowsRewritten, int conflicts, long rowsCarried) {
    public static final Compaction NONE = new Compaction(0, 0, 0, 0, 0, 0, 0);

    Compaction plus(Compaction o) {
      return new Compaction(groups + o.groups, dataFilesRemoved + o.dataFilesRemoved,
          dataFilesAdded + o.dataFilesAdded, deleteVectorsFolded + o.deleteVectorsFolded,
          rowsRewritten + o.rowsRewritten, conflicts + o.conflicts, rowsCarried + o.rowsCarried);
    }
  }

  /**
   * @param entriesExpired tombstone entries older than the retention dropped
   * @param filesDeleted tombstone files whose entries had all expired
   * @param filesRewritten tombstone files rewritten without their expired entries
   */
  public record Tombstones(long entriesExpired, int filesDeleted, int filesRewritten) {
    public static final Tombstones NONE = new Tombstones(0, 0, 0);
  }

  static MaintenanceResult skipped(TableWal table, String tableName, Outcome outcome, String error, long millis) {
    return new MaintenanceResult(table, tableName, outcome, Compaction.NONE, 0, 0, 0, 0, 0, 0, Tombstones.NONE,
        error == null ? List.of() : List.of(error), millis, List.of());
  }

  /** True when the pass changed anything. */
  public boolean didWork() {
    return compaction.groups() > 0 || manifestsAfter != manifestsBefore || snapshotsExpired > 0
        || orphanFilesDeleted > 0 || walSegmentsDeleted > 0 || tombstones.entriesExpired() > 0
        || !sliceChanges.isEmpty();
  }
}
