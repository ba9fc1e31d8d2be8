package io.storageengine.query;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.io.FileNotFoundException;
import java.nio.file.NoSuchFileException;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.NotFoundException;

/**
 * A query's pinned snapshot is gone: table maintenance expired it (and deleted the files only it
 * referenced) after {@code GetFlightInfo} pinned it and before or while {@code DoGet} read it.
 *
 * <p>Reported as {@code NOT_FOUND} (the snapshot no longer exists; retrying the same ticket
 * cannot succeed), naming the table and the snapshot and telling the user to re-run the query,
 * which plans on the current snapshot. Never a server path: the files of a tenant's table are
 * not the client's business. Under the default maintenance policy (snapshots younger than an
 * hour and the ten newest are kept) a query's snapshot outlives its plan-to-fetch window; a
 * policy that expires snapshots sooner ({@code se.maintenance.snapshot-retention=0},
 * {@code min-snapshots=1}) makes this error possible. A read that has started usually completes:
 * DuckDB opens a query's local files when execution starts, an open file survives its deletion,
 * and remote files are read from copies the query holds.
 */
final class SnapshotExpiredException extends SeException {
  SnapshotExpiredException(String displayName, long snapshotId) {
    super(ErrorCode.NOT_FOUND, String.format("table %s: snapshot %d no longer exists: table maintenance expired it "
        + "after the query was planned; re-run the query to read the current snapshot", displayName, snapshotId));
  }

  private SnapshotExpiredException(String message) {
    super(ErrorCode.NOT_FOUND, message);
  }

  /**
   * A pinned WAL tail of an entity table whose schema changed since: the tail is folded with the
   * table's current schema, as reconciliation folds it.
   */
  static SnapshotExpiredException schemaChanged(String displayName) {
    return new SnapshotExpiredException(String.format("table %s: its schema changed after the query was planned; "
        + "re-run the query to read the current schema", displayName));
  }

  /**
   * The WAL segment {@code seq} a query read (or was pinned to read) after its snapshot is gone:
   * it was reconciled into a newer snapshot and collected.
   */
  static SnapshotExpiredException walSegmentGone(String displayName, long seq) {
    return new SnapshotExpiredException(String.format("table %s: WAL segment %d read with the query's snapshot was "
        + "reconciled into a newer snapshot and removed; re-run the query to read the current snapshot",
        displayName, seq));
  }

  /**
   * The error for files of {@code snapshotId} found missing while planning or reading it. Expiry
   * commits the new metadata before it deletes files, so a snapshot whose files vanished is no
   * longer in the refreshed table: then the query's snapshot expired. A missing file of a
   * snapshot the table still has is a storage fault, reported as INTERNAL (still without path).
   */
  static SeException missingFiles(String displayName, Table table, long snapshotId, Throwable cause) {
    boolean expired;
    try {
      table.refresh();
      expired = table.snapshot(snapshotId) == null;
    } catch (RuntimeException e) {
      cause.addSuppressed(e);
      expired = false;
    }
    return expired ? new SnapshotExpiredException(displayName, snapshotId)
        : SeException.internal(String.format("table %s: a file of snapshot %d is missing from storage",
            displayName, snapshotId), cause);
  }

  /** True when {@code error} or one of its causes says a file does not exist. */
  static boolean isMissingFile(Throwable error) {
    for (Throwable cause = error; cause != null; cause = cause.getCause()) {
      if (cause instanceof NotFoundException || cause instanceof FileNotFoundException
          || cause instanceof NoSuchFileException) {
        return true;
      }
    }
    return false;
  }
}
