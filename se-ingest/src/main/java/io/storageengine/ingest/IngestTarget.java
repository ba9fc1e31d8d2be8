package io.storageengine.ingest;

import io.storageengine.wal.TableName;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalOperation;
import java.util.Arrays;
import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * What one stream writes to: the table as loaded when the stream started (so schema changes are
 * seen by the next stream), its WAL, its mode and the stream's operation.
 *
 * @param keyColumns entity tables: the primary key (identifier fields); empty for append tables
 * @param versionColumn entity tables: {@code se.version-column}, or null
 */
record IngestTarget(
    String catalogId,
    TableIdentifier identifier,
    TableWal wal,
    Schema schema,
    boolean entity,
    List<String> keyColumns,
    String versionColumn,
    WalOperation operation) {

  IngestTarget {
    keyColumns = List.copyOf(keyColumns);
  }

  /** {@code catalog.ns.table}, for messages. */
  String displayName() {
    return catalogId + "." + identifier;
  }

  TableName tableName() {
    return new TableName(Arrays.asList(identifier.namespace().levels()), identifier.name());
  }

  boolean isKeyOrVersion(String column) {
    return keyColumns.contains(column) || column.equals(versionColumn);
  }
}
