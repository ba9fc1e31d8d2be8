package io.storageengine.reconcile;

import io.storageengine.duckdb.SqlQuoting;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;

/**
 * The fold of an entity batch's staged WAL operations ({@link WalStaging#TABLE}) against the
 * current rows of their keys ({@link BatchCurrentRows#TABLE}) and their tombstones
 * ({@link BatchTombstones#TABLE}), following the normative semantics (ARCHITECTURE.md 5):
 *
 * <ul>
 *   <li>per key, operations apply in (version, arrival) order; the current row counts as the
 *       first arrival, so an operation of equal version replaces it;</li>
 *   <li>an operation whose version is below the current row's or the key's tombstone's is
 *       ignored; since surviving operations are applied in ascending version, that is the only
 *       place a version comparison is needed;</li>
 *   <li>a column's final value is the one from the last applied operation that carried it, after
 *       the key's last delete; with no delete, the current row's value survives omitted columns;
 *       a new row (no current row, or after a delete) has the column's {@code write-default}
 *       (NULL without one) in columns no operation carried;</li>
 *   <li>a key whose last applied operation is a delete ends without a row and with a tombstone.</li>
 * </ul>
 *
 * <p>The result is the temp table {@value #TABLE}: one row per key with a surviving operation,
 * holding the key and non-key columns of its final state, {@code __last_op} (1 upsert, 2 delete),
 * {@code __last_seq} and {@code __last_ver} (WAL sequence number and version of the last applied
 * operation), {@code __max_ord} (greatest arrival, the current row counting as 0), {@code __ld}
 * (where the last applied delete falls in the key's order, NULL without one), and the replaced
 * current row's {@code __file}, {@code __pos} and {@code __rid} (NULL when the key had none).
 */
final class EntityFold {
  static final String TABLE = "folded";
  /**
   * Made when the table has a version column: per key of the current rows and tombstones, the
   * greater of the current row's and the tombstone's version ({@code __init}).
   */
  static final String INIT = "init";

  private EntityFold() {}

  /**
   * Builds {@value #TABLE}. Keys with a single surviving operation (bulk inserts, plain updates)
   * take a join-only path; keys with several go through the ordered fold.
   */
  static void fold(DuckSession duck, EntityColumns columnsOf) {
    Schema schema = columnsOf.schema();
    List<Types.NestedField> columns = schema.columns();
    Set<Integer> keyIds = schema.identifierFieldIds();
    String keyCols = columnsOf.keyList("");
    String survives = "";
    String init = "";
    if (columnsOf.version() != null) {
      duck.execute("CREATE OR REPLACE TEMP TABLE " + INIT + " AS SELECT " + keyCols + ", max(__v) AS __init FROM ("
          + "SELECT " + keyCols + ", " + columnsOf.versionExpr("") + " AS __v FROM " + BatchCurrentRows.TABLE
          + " UNION ALL SELECT " + keyCols + ", __tv FROM " + BatchTombstones.TABLE + ") GROUP BY " + keyCols);
      init = " LEFT JOIN " + INIT + " i ON " + columnsOf.keyJoin("o", "i");
      survives = " WHERE i.__init IS NULL OR " + columnsOf.versionExpr("o.") + " >= i.__init";
    }
    duck.execute("CREATE OR REPLACE TEMP TABLE live_ops AS SELECT o.*, o.rowid + 1 AS __ord, "
        + columnsOf.versionExpr("o.") + " AS __ver FROM " + WalStaging.TABLE + " o" + init + survives);
    duck.execute("CREATE OR REPLACE TEMP TABLE op_counts AS SELECT " + keyCols + ", count(*) AS __n FROM live_ops"
        + " GROUP BY " + keyCols);

    // Single operation per key: the operation over the current row, if any.
    List<String> single = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      Types.NestedField c = columns.get(i);
      if (keyIds.contains(c.fieldId())) {
        continue;
      }
      String col = SqlQuoting.identifier(c.name());
      // Omitted: the current row's value; a new row keeps the staged value, the write default.
      single.add("CASE WHEN o." + WalStaging.presentFlag(i) + " THEN o." + col + " WHEN e.__file IS NOT NULL THEN e."
          + col + " ELSE o." + col + " END AS " + col);
    }
    duck.execute("CREATE OR REPLACE TEMP TABLE " + TABLE + " AS SELECT " + columnsOf.keyList("o.")
        + ", o.__op AS __last_op, o.__seq AS __last_seq, o.__ver AS __last_ver, o.__ord AS __max_ord, "
        + "CASE WHEN o.__op = 2 THEN o.__ord END AS __ld, e.__file, e.__pos, e.__rid"
        + (single.isEmpty() ? "" : ", " + String.join(", ", single))
        + " FROM live_ops o JOIN op_counts n ON " + columnsOf.keyJoin("o", "n")
        + " LEFT JOIN " + BatchCurrentRows.TABLE + " e ON " + columnsOf.keyJoin("o", "e") + " WHERE n.__n = 1");

    if (duck.queryLong("SELECT count(*) FROM op_counts WHERE __n > 1") == 0) {
      return;
    }
    List<String> existingFlags = new ArrayList<>();
    List<String> opFlags = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      existingFlags.add("TRUE AS " + WalStaging.presentFlag(i));
      opFlags.add("o." + WalStaging.presentFlag(i));
    }
    duck.execute("CREATE OR REPLACE TEMP TABLE multi_keys AS SELECT " + keyCols + " FROM op_counts WHERE __n > 1");
    duck.execute("CREATE OR REPLACE TEMP TABLE events AS "
        + "SELECT " + columnsOf.columnList("e.") + ", " + String.join(", ", existingFlags)
        + ", CAST(1 AS TINYINT) AS __op, "
        + "CAST(NULL AS BIGINT) AS __seq, CAST(0 AS BIGINT) AS __ord, e.__file, e.__pos, e.__rid, "
        + columnsOf.versionExpr("e.") + " AS __ver FROM " + BatchCurrentRows.TABLE + " e JOIN multi_keys m ON "
        + columnsOf.keyJoin("e", "m")
        + " UNION ALL SELECT " + columnsOf.columnList("o.") + ", " + String.join(", ", opFlags) + ", o.__op, o.__seq, "
        + "o.__ord, CAST(NULL AS VARCHAR), CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), o.__ver"
        + " FROM live_ops o JOIN multi_keys m ON " + columnsOf.keyJoin("o", "m"));

    List<String> aggregates = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      Types.NestedField c = columns.get(i);
      if (keyIds.contains(c.fieldId())) {
        continue;
      }
      String carried = WalStaging.presentFlag(i) + " AND __rk > coalesce(__ld, 0)";
      String last = "arg_max_null(" + SqlQuoting.identifier(c.name()) + ", CASE WHEN " + carried + " THEN __rk END)";
      // No operation since the last delete carried the column and no current row survives: the
      // row is new, so it gets the write default.
      aggregates.add((c.writeDefault() == null ? last
          : "CASE WHEN count(CASE WHEN " + carried + " THEN 1 END) = 0 THEN " + DuckSql.writeDefault(c)
              + " ELSE " + last + " END") + " AS " + SqlQuoting.identifier(c.name()));
    }
    duck.execute("INSERT INTO " + TABLE + " "
        + "WITH r AS (SELECT *, row_number() OVER (PARTITION BY " + keyCols
        + " ORDER BY __ver ASC NULLS FIRST, __ord) AS __rk FROM events), "
        + "d AS (SELECT *, max(CASE WHEN __op = 2 THEN __rk END) OVER (PARTITION BY " + keyCols + ") AS __ld FROM r) "
        + "SELECT " + keyCols + ", arg_max(__op, __rk) AS __last_op, arg_max(__seq, __rk) AS __last_seq, "
        + "arg_max_null(__ver, __rk) AS __last_ver, max(__ord) AS __max_ord, max(__ld) AS __ld, "
        + "max(__file) AS __file, max(__pos) AS __pos, max(__rid) AS __rid"
        + (aggregates.isEmpty() ? "" : ", " + String.join(", ", aggregates))
        + " FROM d GROUP BY " + keyCols);
  }
}
