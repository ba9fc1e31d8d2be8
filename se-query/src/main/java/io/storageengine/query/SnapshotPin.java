package io.storageengine.query;

import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * The table state a query reads: a snapshot (or none for an empty table), the schema it is read
 * with, and the last acknowledged WAL segment read on top of the snapshot ({@code walThrough},
 * see {@link WalTail}; null: the snapshot only). Pinned when the query is planned and carried in
 * the ticket, so {@code DoGet} reads exactly what {@code GetFlightInfo} described.
 */
record SnapshotPin(Long snapshotId, int schemaId, Long walThrough) {
  SnapshotPin(Long snapshotId, int schemaId) {
    this(snapshotId, schemaId, null);
  }

  /** The table's current snapshot, read with its current schema, without WAL. */
  static SnapshotPin current(Table table) {
    Snapshot snapshot = table.currentSnapshot();
    return new SnapshotPin(snapshot == null ? null : snapshot.snapshotId(), table.schema().schemaId());
  }

  /** This pin with the WAL read through {@code seq}. */
  SnapshotPin withWalThrough(long seq) {
    return new SnapshotPin(snapshotId, schemaId, seq);
  }
}
