package io.storageengine.catalog;

import java.util.List;
import java.util.Optional;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;

/**
 * What {@code se table describe} shows about a table: plain values read from its metadata.
 *
 * @param currentSnapshotId empty before the first commit
 * @param walSeq the {@code se.wal.seq} of the newest snapshot that carries one: the last WAL
 *     sequence number included in the table; empty when the engine never committed to it
 */
public record TableDescription(
    String name,
    String uuid,
    String location,
    int formatVersion,
    TableDefinition.Mode mode,
    List<String> primaryKey,
    Optional<String> versionColumn,
    Schema schema,
    PartitionSpec partitionSpec,
    SortOrder sortOrder,
    Optional<Long> currentSnapshotId,
    Optional<Long> walSeq) {}
