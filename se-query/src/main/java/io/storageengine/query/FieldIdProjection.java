package io.storageengine.query;

import io.storageengine.duckdb.SqlQuoting;
import java.util.StringJoiner;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * How DuckDB reads a group of Parquet files of one table by Iceberg field id: the
 * {@code read_parquet(..., schema = MAP {...})} argument and the select list of the view.
 *
 * <p>DuckDB resolves only top-level columns by field id; inside a struct it matches fields by
 * name. So when a column holds structs (directly, or as list elements or map values), the file's
 * own schema is used (read from its footer, see {@link io.storageengine.duckdb.ParquetFooters}):
 * the column is read with the struct field names the file has (found by field id) and rebuilt
 * with {@code struct_pack} under the table's names, fields the file lacks taking their default
 * (NULL), fields the table dropped left out. Files of the same schema share one shape, so a table
 * reads with as many {@code read_parquet} calls as it has distinct file schemas.
 *
 * @param fieldMap the {@code schema} argument, or null to read by column name
 * @param selectList the view's columns, named and typed as the table schema says
 */
record FieldIdProjection(String fieldMap, String selectList) {

  /** The {@code read_parquet} options that select the columns ({@code ""} when read by name). */
  String readOptions() {
    return fieldMap == null ? "" : ", schema = " + fieldMap;
  }

  /**
   * This projection (by field id) also reading {@code entries} (more {@code id: {name, type,
   * default_value}} entries of the {@code schema} map), which the select list leaves to the caller.
   */
  FieldIdProjection withFields(String entries) {
    if (fieldMap == null) {
      throw new IllegalStateException("a projection by name reads no field ids");
    }
    return new FieldIdProjection(fieldMap.substring(0, fieldMap.length() - 1) + ", " + entries + "}", selectList);
  }

  /** Reads the table's columns by name: right only for files written with {@code schema}'s names. */
  static FieldIdProjection byName(Schema schema) {
    StringJoiner columns = new StringJoiner(", ");
    for (Types.NestedField field : schema.columns()) {
      columns.add(SqlQuoting.identifier(field.name()));
    }
    return new FieldIdProjection(null, columns.toString());
  }

  /** Whether reading by field id needs each file's schema: some column holds structs. */
  static boolean needsFileLayout(Schema schema) {
    for (Types.NestedField field : schema.columns()) {
      if (holdsStruct(field.type())) {
        return true;
      }
    }
    return false;
  }

  /**
   * Reads top-level columns by field id; with {@code file} (the schema the files read were
   * written with) also the fields of nested structs. {@code file} may be null when no column
   * holds structs.
   */
  static FieldIdProjection byFieldId(Schema schema, Schema file) {
    StringJoiner columns = new StringJoiner(", ");
    StringJoiner fieldMap = new StringJoiner(", ", "MAP {", "}");
    for (Types.NestedField field : schema.columns()) {
      Types.NestedField inFile = file == null ? null : child(file.asStruct(), field.fieldId());
      Type column = inFile == null ? null : inFile.type();
      String name = SqlQuoting.identifier(field.name());
      String readType;
      if (column != null && holdsStruct(field.type())) {
        readType = fileType(field.name(), field.type(), column);
        columns.add(rebuild(field.name(), field.type(), column, name, 0) + " AS " + name);
      } else {
        readType = IcebergTypes.duckdbType(field.name(), field.type());
        columns.add(name);
      }
      // Every default_value is VARCHAR (DuckDB casts it to the column's type): the map's values
      // must share one type, and defaults of different column types would not.
      String defaultValue = IcebergTypes.defaultLiteral(field);
      fieldMap.add(field.fieldId() + ": {name: " + SqlQuoting.literal(field.name()) + ", type: "
          + SqlQuoting.literal(readType) + ", default_value: "
          + ("NULL".equals(defaultValue) ? "NULL" : "CAST(" + defaultValue + " AS VARCHAR)") + "}");
    }
    return new FieldIdProjection(fieldMap.toString(), columns.toString());
  }

  private static boolean holdsStruct(Type type) {
    switch (type.typeId()) {
      case STRUCT: return true;
      case LIST: return holdsStruct(type.asListType().elementType());
      case MAP: return holdsStruct(type.asMapType().keyType()) || holdsStruct(type.asMapType().valueType());
      default: return false;
    }
  }

  /** The DuckDB type to read {@code file} with: the file's struct field names, the table's field types. */
  private static String fileType(String column, Type type, Type file) {
    if (!holdsStruct(type)) {
      return IcebergTypes.duckdbType(column, type);
    }
    switch (type.typeId()) {
      case STRUCT: {
        StringJoiner fields = new StringJoiner(", ", "STRUCT(", ")");
        for (Types.NestedField field : type.asStructType().fields()) {
          Types.NestedField inFile = fileField(file, field.fieldId());
          if (inFile != null) {
            fields.add(SqlQuoting.identifier(inFile.name()) + " "
                + fileType(column + "." + field.name(), field.type(), inFile.type()));
          }
        }
        // A struct none of whose fields the file has: read by the table's names only to keep the
        // struct's own NULLs; rebuild() gives every field its default.
        return hasAnyField(type, file) ? fields.toString() : IcebergTypes.duckdbType(column, type);
      }
      case LIST:
        return fileType(column, type.asListType().elementType(), listElement(file)) + "[]";
      case MAP:
        return "MAP(" + fileType(column, type.asMapType().keyType(), mapKey(file)) + ", "
            + fileType(column, type.asMapType().valueType(), mapValue(file)) + ")";
      default:
        return IcebergTypes.duckdbType(column, type);
    }
  }

  /** {@code expression} (read with {@link #fileType}) as a value of the table's {@code type}. */
  private static String rebuild(String column, Type type, Type file, String expression, int depth) {
    if (!holdsStruct(type)) {
      return expression;
    }
    switch (type.typeId()) {
      case STRUCT: {
        StringJoiner fields = new StringJoiner(", ");
        boolean anyInFile = hasAnyField(type, file);
        for (Types.NestedField field : type.asStructType().fields()) {
          Types.NestedField inFile = anyInFile ? fileField(file, field.fieldId()) : null;
          String value = inFile == null
              ? "CAST(" + IcebergTypes.defaultLiteral(field) + " AS "
                  + IcebergTypes.duckdbType(column + "." + field.name(), field.type()) + ")"
              : rebuild(column + "." + field.name(), field.type(), inFile.type(),
                  "struct_extract(" + expression + ", " + SqlQuoting.literal(inFile.name()) + ")", depth);
          fields.add(SqlQuoting.identifier(field.name()) + " := " + value);
        }
        return "CASE WHEN " + expression + " IS NULL THEN NULL ELSE struct_pack(" + fields + ") END";
      }
      case LIST: {
        String element = "__se_e" + depth;
        return "list_transform(" + expression + ", lambda " + element + ": "
            + rebuild(column, type.asListType().elementType(), listElement(file), element, depth + 1) + ")";
      }
      case MAP: {
        String entry = "__se_e" + depth;
        Types.MapType map = type.asMapType();
        return "map_from_entries(list_transform(map_entries(" + expression + "), lambda " + entry + ": struct_pack("
            + "\"key\" := " + rebuild(column, map.keyType(), mapKey(file), "struct_extract(" + entry + ", 'key')", depth + 1)
            + ", \"value\" := " + rebuild(column, map.valueType(), mapValue(file),
                "struct_extract(" + entry + ", 'value')", depth + 1)
            + ")))";
      }
      default:
        return expression;
    }
  }

  private static boolean hasAnyField(Type struct, Type file) {
    for (Types.NestedField field : struct.asStructType().fields()) {
      if (fileField(file, field.fieldId()) != null) {
        return true;
      }
    }
    return false;
  }

  /** The field with Iceberg field id {@code id} of the file's struct {@code file}, or null. */
  private static Types.NestedField fileField(Type file, int id) {
    return file != null && file.isStructType() ? child(file.asStructType(), id) : null;
  }

  private static Types.NestedField child(Types.StructType struct, int id) {
    for (Types.NestedField field : struct.fields()) {
      if (field.fieldId() == id) {
        return field;
      }
    }
    return null;
  }

  /** The element type of the file's list {@code file}, or null. */
  private static Type listElement(Type file) {
    return file != null && file.isListType() ? file.asListType().elementType() : null;
  }

  private static Type mapKey(Type file) {
    return file != null && file.isMapType() ? file.asMapType().keyType() : null;
  }

  private static Type mapValue(Type file) {
    return file != null && file.isMapType() ? file.asMapType().valueType() : null;
  }
}
