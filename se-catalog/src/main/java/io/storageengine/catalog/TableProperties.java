package io.storageengine.catalog;

/**
 * Iceberg table properties and snapshot summary keys that the engine reads and writes. The
 * {@code se.*} table properties are read only through {@link TableSettings}, which holds the one
 * parsing rule of each.
 */
public final class TableProperties {
  /** {@code append} (default) or {@code entity}, case-insensitive; anything else is refused. */
  public static final String MODE = "se.mode";
  public static final String MODE_APPEND = "append";
  public static final String MODE_ENTITY = "entity";
  /** Entity tables: numeric, date or timestamp column; highest version wins per key. */
  public static final String VERSION_COLUMN = "se.version-column";
  /** Entity tables: how long deletes are remembered (ISO-8601 duration or ms); default 7 days. */
  public static final String TOMBSTONE_RETENTION = "se.tombstone-retention";
  /**
   * How long the engine remembers an idle idempotent producer (ISO-8601 duration or ms);
   * default 7 days. A resend after that is written again.
   */
  public static final String PRODUCER_RETENTION = "se.producer-retention";
  /**
   * Entity tables: the number of hash slices the key space is divided into, fixed at creation
   * (1..256); absent means the table is not sliced. See {@link TableSlices}.
   */
  public static final String SLICE_COUNT = "se.slice.count";
  /**
   * Sliced entity tables: the rows a slice aims at; table maintenance splits a slice above twice
   * this and merges two neighbours together below half of it (a positive whole number; default
   * {@link TableSettings#DEFAULT_SLICE_TARGET_ROWS}).
   */
  public static final String SLICE_TARGET_ROWS = "se.slice.target-rows";
  /**
   * {@code se.variant.shredding.<column>}: how reconciliation shreds the variant column
   * {@code <column>} into typed Parquet columns: {@code auto} (the default), {@code off}, or a
   * list of typed fields. See {@link VariantShredding}.
   */
  public static final String VARIANT_SHREDDING_PREFIX = "se.variant.shredding.";
  /**
   * Snapshot summary: the last WAL seq included in the table state as of this snapshot; on a
   * sliced table the least of its slices' progress.
   */
  public static final String SUMMARY_WAL_SEQ = "se.wal.seq";
  /** Snapshot summary of a sliced table: {@code se.wal.seq.<slice id>}, one slice's progress. */
  public static final String SUMMARY_WAL_SEQ_SLICE_PREFIX = "se.wal.seq.";
  /**
   * Snapshot summary: the identity of the reconcile pass's commit attempt that made the snapshot
   * (a random UUID), by which a pass whose commit failed tells whether it landed all the same
   * when it wrote no file (only its WAL progress) that would tell it.
   */
  public static final String SUMMARY_COMMIT_ID = "se.commit-id";

  private TableProperties() {}
}
