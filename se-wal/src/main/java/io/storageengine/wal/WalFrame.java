package io.storageengine.wal;

/**
 * One validated batch inside a WAL segment.
 *
 * <p>{@code arrowIpc} is an Arrow IPC <em>stream</em> (schema + one or more record batches).
 * Every top-level and nested field of that schema carries the table's Iceberg field id in its
 * field metadata under {@link #FIELD_ID_METADATA_KEY}; {@code schemaId} is the Iceberg schema id
 * the batch was validated against. Columns absent from the schema were absent from the batch
 * (a partial upsert for entity tables); delete frames carry the key and version columns only.
 *
 * <p>{@code producer} is the identity of an idempotent write, null for a plain one: readers
 * skip a frame whose (producer, sequence) an earlier frame of the WAL already carries
 * ({@link ProducerDedup}).
 */
public record WalFrame(WalOperation operation, int schemaId, long[] requestIds, long rowCount,
    byte[] arrowIpc, ProducerStamp producer) {

  /** Arrow field metadata key holding the Iceberg field id (the Parquet/Arrow convention). */
  public static final String FIELD_ID_METADATA_KEY = "PARQUET:field_id";

  /** A frame of a plain (not idempotent) write. */
  public WalFrame(
      WalOperation operation, int schemaId, long[] requestIds, long rowCount, byte[] arrowIpc) {
    this(operation, schemaId, requestIds, rowCount, arrowIpc, null);
  }
}
