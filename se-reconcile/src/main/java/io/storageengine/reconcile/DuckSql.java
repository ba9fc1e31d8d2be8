package io.storageengine.reconcile;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DuckLiterals;
import io.storageengine.duckdb.DuckTypes;
import io.storageengine.duckdb.SqlQuoting;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * SQL text for DuckDB derived from Iceberg schemas: column types (the shared mapping, with
 * reconcile's error), the {@code FIELD_IDS} clause of {@code COPY ... (FORMAT parquet)}, and the
 * expressions that conform a WAL frame's or an older data file's columns (matched by field id)
 * to the current schema.
 *
 * <p>Internal to se-reconcile; public only for its {@code maintenance} package.
 */
public final class DuckSql {
  private DuckSql() {}

  /** The DuckDB type that holds an Iceberg type without loss (see {@link DuckTypes}). */
  public static String type(Type type) {
    return DuckTypes.of("", type,
        (column, unsupported) -> SeException.invalid("Iceberg type %s is not supported by reconciliation", unsupported));
  }

  /**
   * The value of column {@code c} in a row written without it (a WAL frame that does not carry
   * it): its Iceberg v3 {@code write-default}, or a typed NULL when it has none.
   */
  static String writeDefault(Types.NestedField c) {
    return valueOrNull(c.type(), c.writeDefault());
  }

  /**
   * The value of column {@code c} in a data file written before it was added: its Iceberg v3
   * {@code initial-default}, or a typed NULL when it has none.
   */
  static String initialDefault(Types.NestedField c) {
    return valueOrNull(c.type(), c.initialDefault());
  }

  private static String valueOrNull(Type type, Object value) {
    String literal = value == null ? null : DuckLiterals.of(type, value);
    return literal != null ? literal : "CAST(NULL AS " + type(type) + ")";
  }

  /** {@code {"a": 1, "s": {__duckdb_field_id: 2, "x": 3}, ...}} for the given columns. */
  static String fieldIds(List<Types.NestedField> columns) {
    List<String> parts = new ArrayList<>();
    for (Types.NestedField f : columns) {
      parts.add(SqlQuoting.identifier(f.name()) + ": " + fieldIdValue(f.fieldId(), f.type()));
    }
    return "{" + String.join(", ", parts) + "}";
  }

  private static String fieldIdValue(int id, Type type) {
    // A variant is one Iceberg field: the id goes on its group, not on metadata and value.
    if (type.isPrimitiveType() || type.isVariantType()) {
      return Integer.toString(id);
    }
    List<String> parts = new ArrayList<>();
    parts.add("__duckdb_field_id: " + id);
    switch (type.typeId()) {
      case STRUCT -> {
        for (Types.NestedField f : type.asStructType().fields()) {
          parts.add(SqlQuoting.identifier(f.name()) + ": " + fieldIdValue(f.fieldId(), f.type()));
        }
      }
      case LIST -> {
        Types.ListType l = type.asListType();
        parts.add("element: " + fieldIdValue(l.elementId(), l.elementType()));
      }
      case MAP -> {
        Types.MapType m = type.asMapType();
        parts.add("key: " + fieldIdValue(m.keyId(), m.keyType()));
        parts.add("value: " + fieldIdValue(m.valueId(), m.valueType()));
      }
      default -> throw new IllegalStateException("unexpected nested type " + type);
    }
    return "{" + String.join(", ", parts) + "}";
  }

  /**
   * The expression that turns {@code expr}, a column of a WAL frame described by {@code frame},
   * into a value of the current Iceberg type {@code target}: nested fields are matched by id,
   * renamed ones take the current name, dropped ones are left out, new ones have their write
   * default (NULL without one), and widened primitives are cast.
   */
  static String conform(String expr, Field frame, Type target) {
    return conform(expr, frame, target, false);
  }

  /**
   * As {@link #conform(String, Field, Type)}; {@code fromParquet} says the value was read by
   * DuckDB from a Parquet file (uuid is already a UUID) rather than from an Arrow frame (uuid is
   * a 16-byte BLOB).
   */
  static String conform(String expr, Field frame, Type target, boolean fromParquet) {
    switch (target.typeId()) {
      case STRUCT -> {
        Map<Integer, Field> byId = childrenById(frame.getChildren());
        List<String> parts = new ArrayList<>();
        for (Types.NestedField f : target.asStructType().fields()) {
          Field child = byId.get(f.fieldId());
          // A field the value does not have: its initial default in an older file, its write
          // default in a frame written without it.
          String value = child == null
              ? (fromParquet ? initialDefault(f) : writeDefault(f))
              : conform("struct_extract(" + expr + ", " + SqlQuoting.literal(child.getName()) + ")", child, f.type(),
                  fromParquet);
          parts.add(SqlQuoting.identifier(f.name()) + " := " + value);
        }
        return "CASE WHEN " + expr + " IS NULL THEN NULL ELSE struct_pack(" + String.join(", ", parts) + ") END";
      }
      case LIST -> {
        Field element = frame.getChildren().get(0);
        Type elementType = target.asListType().elementType();
        return "list_transform(" + expr + ", lambda __e: " + conform("__e", element, elementType, fromParquet) + ")";
      }
      case MAP -> {
        Field entries = frame.getChildren().get(0);
        Field key = entries.getChildren().get(0);
        Field value = entries.getChildren().get(1);
        Types.MapType m = target.asMapType();
        return "CASE WHEN " + expr + " IS NULL THEN NULL ELSE map_from_entries(list_transform(map_entries("
            + expr + "), lambda __m: struct_pack(key := " + conform("__m.key", key, m.keyType(), fromParquet)
            + ", value := " + conform("__m.value", value, m.valueType(), fromParquet) + "))) END";
      }
      case UUID -> {
        if (fromParquet) {
          return "CAST(" + expr + " AS UUID)";
        }
        // Arrow carries uuid as fixed_size_binary(16), which DuckDB sees as a BLOB.
        return "CAST(regexp_replace(lower(hex(" + expr + ")), "
            + "'^(.{8})(.{4})(.{4})(.{4})(.{12})$', '\\1-\\2-\\3-\\4-\\5') AS UUID)";
      }
      case FIXED, BINARY -> {
        return "CAST(" + expr + " AS BLOB)";
      }
      default -> {
        return "CAST(" + expr + " AS " + type(target) + ")";
      }
    }
  }

  /**
   * The value of current column {@code c} in a Parquet file of {@code fileSchema} read as
   * {@code alias}: the file's column with the same field id under the file's name, cast or
   * conformed to the current type; its initial default (or NULL) when the file has no such
   * column (added since).
   * Columns whose type did not change are not cast, so join filters still reach the reader.
   */
  public static String fileColumn(Schema fileSchema, Types.NestedField c, String alias) {
    Types.NestedField inFile = fileSchema.findField(c.fieldId());
    if (inFile == null) {
      return initialDefault(c);
    }
    String expr = alias + "." + SqlQuoting.identifier(inFile.name());
    if (c.type().isPrimitiveType() || c.type().isVariantType()) {
      return inFile.type().equals(c.type()) ? expr : "CAST(" + expr + " AS " + type(c.type()) + ")";
    }
    return conform(expr, IcebergArrowSchemas.toArrow(inFile), c.type(), true);
  }

  static Map<Integer, Field> childrenById(List<Field> fields) {
    Map<Integer, Field> byId = new HashMap<>();
    for (Field f : fields) {
      int id = IcebergArrowSchemas.fieldId(f);
      if (id >= 0) {
        byId.put(id, f);
      }
    }
    return byId;
  }

  /** Quoted path of a (possibly nested) column, e.g. {@code "a"."b"}. */
  static String columnPath(Schema schema, int fieldId) {
    String name = schema.findColumnName(fieldId);
    if (name == null) {
      throw SeException.invalid("field id %d is not in the table schema", fieldId);
    }
    List<String> parts = new ArrayList<>();
    for (String p : name.split("\\.")) {
      parts.add(SqlQuoting.identifier(p));
    }
    return String.join(".", parts);
  }
}
