/**
 * Durable ingestion over Arrow Flight (ARCHITECTURE.md 6): the native DoPut protocol and Flight
 * SQL bulk ingest ({@link io.storageengine.ingest.IngestService}), validation and conversion of
 * batches against the target Iceberg table ({@code BatchValidator}, {@code ColumnConverter}),
 * and per-table group commit into the write-ahead log ({@code GroupCommitter},
 * {@code TableCommitter}).
 */
package io.storageengine.ingest;
