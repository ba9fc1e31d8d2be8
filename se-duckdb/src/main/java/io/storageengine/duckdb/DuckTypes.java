package io.storageengine.duckdb;

import io.storageengine.common.SeException;
import java.util.StringJoiner;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The DuckDB type of an Iceberg type: the type DuckDB writes a column of that Iceberg type with
 * and reads it as. A geometry is DuckDB's GEOMETRY without a CRS and a geography its WKB (a
 * BLOB); their CRS and edge algorithm stay in the Iceberg type. Iceberg types DuckDB has no type
 * for (any type a later Iceberg adds) are refused with the error each caller phrases for its
 * purpose.
 */
public final class DuckTypes {
  private DuckTypes() {}

  /** The error for a (possibly nested) Iceberg type DuckDB cannot hold. */
  @FunctionalInterface
  public interface Unsupported {
    /**
     * @param column the column's path: the top-level name, then {@code .field} per struct level
     *     (list elements and map keys and values keep their column's path)
     * @param type the Iceberg type that has no DuckDB type (the nested one, not the column's)
     */
    SeException error(String column, Type type);
  }

  /** The DuckDB type that holds values of {@code type} without loss. */
  public static String of(String column, Type type, Unsupported unsupported) {
    switch (type.typeId()) {
      case BOOLEAN: return "BOOLEAN";
      case INTEGER: return "INTEGER";
      case LONG: return "BIGINT";
      case FLOAT: return "FLOAT";
      case DOUBLE: return "DOUBLE";
      case DECIMAL: {
        Types.DecimalType decimal = (Types.DecimalType) type;
        return "DECIMAL(" + decimal.precision() + "," + decimal.scale() + ")";
      }
      case DATE: return "DATE";
      case TIME: return "TIME";
      case TIMESTAMP:
        return ((Types.TimestampType) type).shouldAdjustToUTC() ? "TIMESTAMPTZ" : "TIMESTAMP";
      case TIMESTAMP_NANO:
        // TIMESTAMPTZ_NS: DuckDB's zoned nanosecond type, written to Parquet as
        // TIMESTAMP(NANOS, isAdjustedToUTC=true), the annotation the Iceberg spec requires.
        return ((Types.TimestampNanoType) type).shouldAdjustToUTC() ? "TIMESTAMPTZ_NS" : "TIMESTAMP_NS";
      case STRING: return "VARCHAR";
      // Iceberg v3's unknown: always null and never stored in data files; DuckDB's NULL type.
      case UNKNOWN: return "\"NULL\"";
      case UUID: return "UUID";
      // DuckDB's VARIANT reads and writes Parquet's VARIANT logical type (the spec's metadata and
      // value encoding, shredded by DuckDB on write) and imports Arrow's arrow.parquet.variant.
      case VARIANT: return "VARIANT";
      case FIXED:
      case BINARY: return "BLOB";
      case GEOMETRY:
        // DuckDB's core GEOMETRY: reads a Parquet GEOMETRY column (whatever its CRS) and writes
        // one (WKB, with the GEOMETRY logical type and its bounding box statistics under
        // GEOPARQUET_VERSION 'NONE'). Plain GEOMETRY carries no CRS: the column's CRS is the
        // Iceberg type's, which reconciliation writes into the Parquet logical type itself
        // (DuckDB knows few CRS names and would spell another one as PROJJSON).
        return "GEOMETRY";
      // DuckDB has no GEOGRAPHY type: a geography is its WKB, read from a Parquet GEOGRAPHY
      // column as a BLOB; reconciliation writes the GEOGRAPHY logical type itself.
      case GEOGRAPHY: return "BLOB";
      case STRUCT: {
        StringJoiner fields = new StringJoiner(", ", "STRUCT(", ")");
        for (Types.NestedField field : type.asStructType().fields()) {
          fields.add(SqlQuoting.identifier(field.name()) + " "
              + of(column + "." + field.name(), field.type(), unsupported));
        }
        return fields.toString();
      }
      case LIST:
        return of(column, type.asListType().elementType(), unsupported) + "[]";
      case MAP: {
        Types.MapType map = type.asMapType();
        return "MAP(" + of(column, map.keyType(), unsupported) + ", " + of(column, map.valueType(), unsupported) + ")";
      }
      default:
        throw unsupported.error(column, type);
    }
  }
}
