package io.storageengine.reconcile;

import io.storageengine.catalog.TableSettings;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.SqlQuoting;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;

/**
 * The columns of an entity table as the materializer's SQL names them: the primary key, the
 * optional version column (absent: every operation has version 0) and all columns in schema order.
 * Each method returns a SQL fragment; {@code alias} is a table alias with its dot ({@code "o."})
 * or {@code ""}.
 */
final class EntityColumns {
  private static final String SEP = "chr(31)";

  private final Schema schema;
  private final List<Types.NestedField> keys;
  private final Types.NestedField version;

  /** @throws SeException (invalid) if the table is not an entity table */
  EntityColumns(Table table) {
    TableSettings settings = TableSettings.of(table);
    if (!settings.entity()) {
      throw SeException.invalid("table %s is not an entity table", table.name());
    }
    this.schema = table.schema();
    this.keys = List.copyOf(settings.primaryKey());
    this.version = settings.versionColumn().orElse(null);
  }

  Schema schema() {
    return schema;
  }

  List<Types.NestedField> keys() {
    return keys;
  }

  /** The version column, or null when the table has none. */
  Types.NestedField version() {
    return version;
  }

  /** The key columns, comma-separated. */
  String keyList(String alias) {
    List<String> names = new ArrayList<>();
    for (Types.NestedField k : keys) {
      names.add(alias + SqlQuoting.identifier(k.name()));
    }
    return String.join(", ", names);
  }

  /** Equality of every key column between tables {@code left} and {@code right}. */
  String keyJoin(String left, String right) {
    List<String> terms = new ArrayList<>();
    for (Types.NestedField k : keys) {
      terms.add(left + "." + SqlQuoting.identifier(k.name()) + " = " + right + "." + SqlQuoting.identifier(k.name()));
    }
    return String.join(" AND ", terms);
  }

  /** Equality of every key column of a data file (alias {@code r}) and table {@code b}. */
  String fileKeyJoin(Schema fileSchema) {
    List<String> terms = new ArrayList<>();
    for (Types.NestedField k : keys) {
      terms.add(CurrentRows.column(fileSchema, k) + " = b." + SqlQuoting.identifier(k.name()));
    }
    return String.join(" AND ", terms);
  }

  /** Canonical key text (how tombstones name keys): the key columns as VARCHAR joined by U+001F. */
  String keyText(String alias) {
    List<String> parts = new ArrayList<>();
    for (Types.NestedField k : keys) {
      parts.add("CAST(" + alias + SqlQuoting.identifier(k.name()) + " AS VARCHAR)");
    }
    return parts.size() == 1 ? parts.get(0) : "concat_ws(" + SEP + ", " + String.join(", ", parts) + ")";
  }

  /** Every column of the schema, comma-separated. */
  String columnList(String alias) {
    List<String> names = new ArrayList<>();
    for (Types.NestedField c : schema.columns()) {
      names.add(alias + SqlQuoting.identifier(c.name()));
    }
    return String.join(", ", names);
  }

  /** The row's version, or a BIGINT 0 when the table has no version column. */
  String versionExpr(String alias) {
    return version == null ? "CAST(0 AS BIGINT)" : alias + SqlQuoting.identifier(version.name());
  }

  /** The DuckDB type of {@link #versionExpr}. */
  String versionType() {
    return version == null ? "BIGINT" : DuckSql.type(version.type());
  }
}
