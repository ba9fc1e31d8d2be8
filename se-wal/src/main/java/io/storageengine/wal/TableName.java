package io.storageengine.wal;

import java.util.List;

/**
 * The name a table had when it was last written to, kept next to its WAL
 * ({@code table.json}) so that background work can find the table in its catalog. It is only a
 * hint: the reader must check the loaded table's UUID and search the catalog if it moved.
 */
public record TableName(List<String> namespace, String name) {}
