package io.storageengine.query;

import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * The table state a query reads: a snapshot (or none for an empty table) and the schema it is
 * read with. Pinned when the query is planned and carried in the ticket, so {@code DoGet} reads
 * exactly what {@code GetFlightInfo} described.
 */
record SnapshotPin(Long snapshotId, int schemaId) {
  /** The table's current snapshot, read with its current schema. */
  static SnapshotPin current(Table table) {
    Snapshot snapshot = table.currentSnapshot();
    return new SnapshotPin(snapshot == null ? null : snapshot.snapshotId(), table.schema().schemaId());
  }
}
