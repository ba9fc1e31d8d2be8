package io.storageengine.query;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DuckLiterals;
import io.storageengine.duckdb.DuckTypes;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Maps Iceberg types to DuckDB types (for reading Parquet, phrasing the query side's error for
 * types DuckDB cannot hold) and to the Arrow types DuckDB produces for them (for metadata answers
 * that are built without running a query).
 */
final class IcebergTypes {
  private IcebergTypes() {}

  /** The DuckDB type a column of Iceberg type {@code type} is read as (see {@link DuckTypes}). */
  static String duckdbType(String column, Type type) {
    return DuckTypes.of(column, type, (path, unsupported) -> new SeException(ErrorCode.UNSUPPORTED,
        String.format("column `%s`: Iceberg type %s cannot be queried", path, unsupported)));
  }

  /**
   * The Arrow field of a table column as metadata calls report it: the Arrow type of
   * {@link #arrowField(String, Type)} ({@code fixed(n)} as {@code FixedSizeBinary(n)}), not
   * nullable when the column is required, with the Flight SQL column metadata
   * ({@code ARROW:FLIGHT:SQL:*}: type name, precision and scale, catalog, schema and table).
   */
  static Field tableColumn(String namespace, String table, Types.NestedField column) {
    Field field = arrowField(column.name(), column.type());
    ArrowType type = column.type().typeId() == Type.TypeID.FIXED
        ? new ArrowType.FixedSizeBinary(((Types.FixedType) column.type()).length()) : field.getType();
    FieldType fieldType = new FieldType(column.isOptional(), type, null,
        columnMetadata(namespace, table, column.name(), column.type()));
    return new Field(column.name(), fieldType, field.getChildren());
  }

  /** The Flight SQL column metadata of a column of {@code type} read from a table (names may be null). */
  static java.util.Map<String, String> columnMetadata(String namespace, String table, String column, Type type) {
    org.apache.arrow.flight.sql.FlightSqlColumnMetadata.Builder metadata =
        new org.apache.arrow.flight.sql.FlightSqlColumnMetadata.Builder()
            .catalogName(StatementAnalyzer.CATALOG)
            .typeName(typeName(column, type))
            .isAutoIncrement(false)
            .isReadOnly(true)
            .isSearchable(true)
            .isCaseSensitive(type.typeId() == Type.TypeID.STRING);
    if (namespace != null) {
      metadata.schemaName(namespace).tableName(table);
    }
    if (type.typeId() == Type.TypeID.DECIMAL) {
      Types.DecimalType decimal = (Types.DecimalType) type;
      metadata.precision(decimal.precision()).scale(decimal.scale());
    } else if (type.typeId() == Type.TypeID.FIXED) {
      metadata.precision(((Types.FixedType) type).length());
    }
    return metadata.build().getMetadataMap();
  }

  /** The SQL type name of a column: DuckDB's, or Iceberg's for a type DuckDB cannot read. */
  static String typeName(String column, Type type) {
    try {
      return displayName(duckdbType(column, type));
    } catch (SeException e) {
      return type.toString();
    }
  }

  /** A DuckDB type as DuckDB names it: {@code NULL} (Iceberg's unknown) without the quotes a cast needs. */
  static String displayName(String duckdbType) {
    return duckdbType.equals("\"NULL\"") ? "NULL" : duckdbType;
  }

  /** The Arrow field DuckDB returns for an Iceberg field (every DuckDB result column is nullable). */
  static Field arrowField(String name, Type type) {
    switch (type.typeId()) {
      case STRUCT: {
        List<Field> children = new ArrayList<>();
        for (Types.NestedField field : type.asStructType().fields()) {
          children.add(arrowField(field.name(), field.type()));
        }
        return new Field(name, FieldType.nullable(ArrowType.Struct.INSTANCE), children);
      }
      case LIST:
        return new Field(name, FieldType.nullable(ArrowType.List.INSTANCE),
            List.of(arrowField("l", type.asListType().elementType())));
      case MAP: {
        Types.MapType map = type.asMapType();
        Field key = arrowField("key", map.keyType());
        key = new Field("key", FieldType.notNullable(key.getType()), key.getChildren());
        Field entries = new Field("entries", FieldType.notNullable(ArrowType.Struct.INSTANCE),
            List.of(key, arrowField("value", map.valueType())));
        return new Field(name, FieldType.nullable(new ArrowType.Map(false)), List.of(entries));
      }
      default:
        return new Field(name, FieldType.nullable(primitiveArrowType(name, type)), List.of());
    }
  }

  private static ArrowType primitiveArrowType(String column, Type type) {
    switch (type.typeId()) {
      case BOOLEAN: return ArrowType.Bool.INSTANCE;
      case INTEGER: return new ArrowType.Int(32, true);
      case LONG: return new ArrowType.Int(64, true);
      case FLOAT: return new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
      case DOUBLE: return new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
      case DECIMAL: {
        Types.DecimalType decimal = (Types.DecimalType) type;
        return new ArrowType.Decimal(decimal.precision(), decimal.scale(), 128);
      }
      case DATE: return new ArrowType.Date(DateUnit.DAY);
      case TIME: return new ArrowType.Time(TimeUnit.MICROSECOND, 64);
      case TIMESTAMP:
        return new ArrowType.Timestamp(TimeUnit.MICROSECOND,
            ((Types.TimestampType) type).shouldAdjustToUTC() ? "UTC" : null);
      case TIMESTAMP_NANO:
        return new ArrowType.Timestamp(TimeUnit.NANOSECOND,
            ((Types.TimestampNanoType) type).shouldAdjustToUTC() ? "UTC" : null);
      case STRING:
      case UUID: return ArrowType.Utf8.INSTANCE;
      case FIXED:
      case BINARY:
      // A geometry leaves the engine as its WKB (see VariantResults), a geography too (DuckDB
      // holds it as the BLOB of its WKB).
      case GEOMETRY:
      case GEOGRAPHY: return ArrowType.Binary.INSTANCE;
      case UNKNOWN: return ArrowType.Null.INSTANCE;
      // A variant leaves the engine as its JSON text (see VariantResults).
      case VARIANT: return ArrowType.Utf8.INSTANCE;
      default:
        throw new SeException(ErrorCode.UNSUPPORTED,
            String.format("column `%s`: Iceberg type %s cannot be queried", column, type));
    }
  }

  /** A SQL literal for a primitive initial default ({@link DuckLiterals}), or {@code NULL}. */
  static String defaultLiteral(Types.NestedField field) {
    Object value = field.initialDefault();
    String literal = value == null ? null : DuckLiterals.of(field.type(), value);
    return literal == null ? "NULL" : literal;
  }
}
