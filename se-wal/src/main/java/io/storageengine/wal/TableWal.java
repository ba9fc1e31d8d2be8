package io.storageengine.wal;

import io.storageengine.common.Ids;
import java.util.Objects;
import java.util.UUID;

/**
 * The WAL of one table: keyed by the tenant and the Iceberg table UUID, never by name, so a
 * renamed table keeps its WAL and a re-created table never reads the old one's.
 */
public record TableWal(String catalogId, UUID tableUuid) {
  public TableWal {
    Ids.requireCatalogId(catalogId);
    Objects.requireNonNull(tableUuid, "tableUuid");
  }

  /** {@code tenants/<catalog_id>/tables/<table_uuid>/} */
  public String prefix() {
    return "tenants/" + catalogId + "/tables/" + tableUuid + "/";
  }

  /** {@code wal/} under the table prefix: where the segments are. */
  public String walPrefix() {
    return prefix() + "wal/";
  }

  /** {@code table.json} under the table prefix: the last known name, see {@link TableName}. */
  public String tableNameKey() {
    return prefix() + "table.json";
  }

  /** {@code state.json} under the table prefix, see {@link WalState}. */
  public String stateKey() {
    return prefix() + "state.json";
  }

  /**
   * {@code producers.json} under the table prefix: the windows of the table's idempotent
   * producers as of a WAL seq, see {@link ProducerWindows}. Created before the first frame with
   * a producer is appended, so a table without it has never had one.
   */
  public String producersKey() {
    return prefix() + "producers.json";
  }

  /** {@code wal/<seq, 20 digits>.seg} under the table prefix. */
  public String segmentKey(long seq) {
    return walPrefix() + String.format("%020d", seq) + ".seg";
  }

  /**
   * {@code quarantine/<seq, 20 digits>.json} under the table prefix: why reconciliation refused
   * that WAL segment (a frame that fails its check before it reaches DuckDB).
   */
  public String quarantineKey(long seq) {
    return prefix() + "quarantine/" + String.format("%020d", seq) + ".json";
  }

  /**
   * {@code tenants/<catalog_id>/pending/}: where the pending markers of the tenant's tables are,
   * see {@link WalLog#pendingTables}.
   */
  public static String pendingPrefix(String catalogId) {
    return "tenants/" + Ids.requireCatalogId(catalogId) + "/pending/";
  }

  /** {@code tenants/<catalog_id>/pending/<table_uuid>}: this table's pending marker. */
  public String pendingKey() {
    return pendingPrefix(catalogId) + tableUuid;
  }

  public String tombstonePrefix() {
    return prefix() + "tombstones/";
  }
}
