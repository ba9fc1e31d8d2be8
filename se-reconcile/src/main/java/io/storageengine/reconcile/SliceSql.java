package io.storageengine.reconcile;

import io.storageengine.catalog.TableSlices;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The slice hash in DuckDB ({@link TableSlices#hash}, computed on the canonical key text) and
 * the statements that keep a staged WAL batch to the rows a slice pass (or a WAL-tail read of a
 * sliced table) must see. Internal to se-reconcile but {@link #owns(org.apache.iceberg.Table, String,
 * TableSlices.Slice)}.
 */
public final class SliceSql {
  /** The column a staged row's key hash is computed into while a slice's rows are kept. */
  private static final String HASH_COLUMN = "__slice_hash";

  private SliceSql() {}

  /**
   * A condition true for the rows (columns of {@code alias}, e.g. {@code ""}) of {@code table}
   * whose key {@code slice} owns. Public for the {@code maintenance} package's splits and merges.
   */
  public static String owns(org.apache.iceberg.Table table, String alias, TableSlices.Slice slice) {
    return owns(new EntityColumns(table), alias, slice);
  }

  /** The slice hash (UBIGINT in {@code [0, 2^32)}) of the key columns of {@code alias}. */
  static String hash(EntityColumns columns, String alias) {
    return "CAST(('0x' || left(md5(" + columns.keyText(alias) + "), 8)) AS UBIGINT)";
  }

  /** A condition true for the keys (columns of {@code alias}) that {@code slice} owns. */
  static String owns(EntityColumns columns, String alias, TableSlices.Slice slice) {
    return inRange(hash(columns, alias), slice);
  }

  /** A condition true when the slice hash {@code hash} (an expression) lies in {@code slice}'s range. */
  private static String inRange(String hash, TableSlices.Slice slice) {
    return "(" + hash + " >= " + slice.lo() + " AND " + hash + " < " + slice.hi() + ")";
  }

  /**
   * For {@link WalStaging#load(DuckSession, org.apache.iceberg.Schema, List, UnaryOperator)}: keeps
   * the WAL rows of the keys {@code slice} owns, hashing each row's key once, as it is staged.
   */
  static UnaryOperator<String> keepOnly(EntityColumns columns, TableSlices.Slice slice) {
    return rows -> "SELECT * EXCLUDE (" + HASH_COLUMN + ") FROM (SELECT *, " + hash(columns, "") + " AS "
        + HASH_COLUMN + " FROM (" + rows + ")) WHERE " + inRange(HASH_COLUMN, slice);
  }

  /**
   * An expression over the key columns of {@code alias}: the progress (in {@code marks}, 0 when
   * absent) of the slice of {@code slices} that owns the key.
   */
  static String markOf(EntityColumns columns, String alias, List<TableSlices.Slice> slices,
      Map<Integer, Long> marks) {
    String h = hash(columns, alias);
    StringBuilder sql = new StringBuilder("(CASE");
    for (TableSlices.Slice s : slices) {
      sql.append(" WHEN ").append(h).append(" < ").append(s.hi()).append(" THEN ")
          .append(marks.getOrDefault(s.id(), 0L));
    }
    return sql.append(" END)").toString();
  }

  /**
   * Removes from the staged WAL rows those its key's slice has already reconciled (seq at or
   * below the slice's progress in {@code marks}); rows above every slice's progress stay
   * without hashing.
   */
  static void dropReconciled(DuckSession duck, EntityColumns columns, List<TableSlices.Slice> slices,
      Map<Integer, Long> marks) {
    long most = 0;
    for (TableSlices.Slice s : slices) {
      most = Math.max(most, marks.getOrDefault(s.id(), 0L));
    }
    if (most == 0) {
      return;
    }
    duck.execute("DELETE FROM " + WalStaging.TABLE + " WHERE __seq <= " + most + " AND __seq <= "
        + markOf(columns, "", slices, marks));
  }
}
