package io.storageengine.reconcile;

import io.storageengine.common.SeException;
import io.storageengine.duckdb.SqlQuoting;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.duckdb.DuckDBAppender;

/**
 * The tombstones an entity batch reads and writes. Tables without a version column keep none:
 * every operation has the same version, so a delete needs no memory to beat older operations.
 *
 * <ul>
 *   <li>{@link #load} fills the temp table {@value #TABLE} (key columns and {@code __tv}, the
 *       tombstone's version) with the committed, unexpired tombstones of the batch's keys;</li>
 *   <li>{@link #write} records a tombstone for every key whose final operation in {@code folded}
 *       is a delete, with the delete's version and WAL sequence number.</li>
 * </ul>
 */
final class BatchTombstones {
  static final String TABLE = "tombs";

  private final DuckSession duck;
  private final Table table;
  private final EntityColumns columns;
  private final TombstoneStore tombstones;
  private final ReconcileOptions options;

  BatchTombstones(DuckSession duck, Table table, EntityColumns columns, TombstoneStore tombstones,
      ReconcileOptions options) {
    this.duck = duck;
    this.table = table;
    this.columns = columns;
    this.tombstones = tombstones;
    this.options = options;
  }

  /**
   * @param keysTable temp table with one row per key of the batch
   * @param highWaterMark tombstones of WAL sequence numbers above it are not committed yet and are ignored
   */
  void load(String keysTable, long highWaterMark) {
    load(keysTable, highWaterMark, null);
  }

  /**
   * As {@link #load(String, long)}, where a key's tombstones count only up to the WAL seq that
   * {@code committedSeqSql} (an expression over the key columns of alias {@code b.}; null: no
   * further limit) gives for it: on a sliced table, the progress of the key's slice.
   */
  void load(String keysTable, long highWaterMark, String committedSeqSql) {
    load(keysTable, highWaterMark, committedSeqSql, anyStored());
  }

  /**
   * Whether {@link #load} can find a tombstone at all: the table has a version column and
   * tombstones stored (a listing of the store).
   */
  boolean anyStored() {
    return columns.version() != null && !tombstones.isEmpty();
  }

  /** As {@link #load(String, long, String)}, where {@code anyStored} is what {@link #anyStored} just answered. */
  void load(String keysTable, long highWaterMark, String committedSeqSql, boolean anyStored) {
    Map<String, TombstoneStore.Tombstone> found = Map.of();
    if (anyStored) {
      // Each key is looked up in its bucket's files (kept by key), whatever the batch's size.
      long[] integers = integerKeys(keysTable);
      found = integers != null
          ? tombstones.loadIntegers(integers, highWaterMark, options.clock().instant(), retention())
          : tombstones.load(keyTexts(keysTable), highWaterMark, options.clock().instant(), retention());
    }
    if (found.isEmpty()) {
      // No tombstone can apply: the empty table, one statement (a WAL tail's point query runs this).
      duck.execute("CREATE OR REPLACE TEMP TABLE " + TABLE + " AS SELECT " + columns.keyList("") + ", CAST(NULL AS "
          + columns.versionType() + ") AS __tv FROM " + keysTable + " WHERE FALSE");
      return;
    }
    duck.execute("CREATE OR REPLACE TEMP TABLE tomb_text (__k VARCHAR, __v VARCHAR, __s BIGINT)");
    try (DuckDBAppender appender = duck.connection().createAppender("temp", "main", "tomb_text")) {
      for (TombstoneStore.Tombstone t : found.values()) {
        appender.beginRow().append(t.key()).append(t.version()).append(t.seq()).endRow();
      }
    } catch (SQLException e) {
      throw SeException.internal("DuckDB append failed: " + e.getMessage(), e);
    }
    duck.execute("CREATE OR REPLACE TEMP TABLE " + TABLE + " AS SELECT " + columns.keyList("b.") + ", CAST(t.__v AS "
        + columns.versionType() + ") AS __tv FROM tomb_text t JOIN " + keysTable + " b ON t.__k = "
        + columns.keyText("b.") + (committedSeqSql == null ? "" : " WHERE t.__s <= " + committedSeqSql));
  }

  /**
   * The keys of {@code keysTable} as numbers when the key is one {@code int} or {@code long}
   * column (its text is its decimal form), else null.
   */
  private long[] integerKeys(String keysTable) {
    boolean integral = columns.keys().size() == 1 && switch (columns.keys().get(0).type().typeId()) {
      case INTEGER, LONG -> true;
      default -> false;
    };
    if (!integral) {
      return null;
    }
    try {
      return KeyIndexReads.column(duck, "SELECT CAST(" + SqlQuoting.identifier(columns.keys().get(0).name())
          + " AS BIGINT) FROM " + keysTable);
    } catch (KeyIndex.Unusable e) {
      return null; // the one value the reader cannot tell from NULL (Long.MIN_VALUE): by text
    }
  }

  private List<String> keyTexts(String keysTable) {
    List<String> keyTexts = new ArrayList<>();
    duck.query("SELECT " + columns.keyText("") + " FROM " + keysTable, rs -> keyTexts.add(rs.getString(1)));
    return keyTexts;
  }

  /** Writes the tombstones of the keys {@code folded} ends with a delete, for WAL range {@code fromSeq..toSeq}. */
  void write(long fromSeq, long toSeq) {
    if (columns.version() == null) {
      return;
    }
    List<TombstoneStore.Tombstone> result = new ArrayList<>();
    long now = options.clock().millis();
    duck.query("SELECT " + columns.keyText("") + ", CAST(__last_ver AS VARCHAR), __last_seq FROM " + EntityFold.TABLE
        + " WHERE __max_ord > 0 AND __last_op = 2",
        rs -> result.add(new TombstoneStore.Tombstone(rs.getString(1), rs.getString(2), rs.getLong(3), now)));
    if (!result.isEmpty()) {
      tombstones.write(fromSeq, toSeq, result);
    }
  }

  private Duration retention() {
    return TombstoneStore.retention(table, options.defaultTombstoneRetention());
  }
}
