package io.storageengine.catalog;

import io.storageengine.common.SeException;
import java.util.Optional;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The Iceberg types the engine carries end to end: ingestion (Arrow), the WAL, reconciliation
 * (DuckDB and the Parquet writers) and queries. A table is ingestible only when every one of its
 * columns, nested fields included, has one of these types, also columns a batch does not carry:
 * reconciliation writes every column of the table, so an acknowledged batch could otherwise
 * never be published.
 *
 * <p>Supported: boolean, int, long, float, double, decimal, date, time, timestamp, timestamptz,
 * timestamp_ns, timestamptz_ns, string, uuid, fixed, binary, and struct, list and map of these;
 * also a top-level column of type variant, one of type unknown (always null, never in data
 * files), and one of type geometry or geography (any CRS and edge algorithm; reconciliation writes
 * them into the Parquet logical type). Not yet: variant or unknown inside a nested type (DuckDB
 * 2.0 cannot write a VARIANT below the top level of a Parquet file), geometry or geography inside
 * a nested type (reconciliation sets the Parquet geospatial logical types of top-level columns
 * only), and any type a later Iceberg adds.
 */
public final class SupportedTypes {
  private SupportedTypes() {}

  /**
   * Whether values of {@code type} (a primitive, or a nested type as a whole) are carried end to
   * end inside a column; a top-level unknown or variant column is supported on its own (see
   * {@link #requireIngestible}).
   */
  public static boolean isSupported(Type type) {
    return unsupported("", type).isEmpty();
  }

  /**
   * INVALID_ARGUMENT naming the first column (by its full dotted path) of {@code schema} whose
   * type is not supported: {@code table a.b: column s.geo has type geometry(OGC:CRS84), which
   * ingestion does not support yet (only as a top-level column)}.
   */
  public static void requireIngestible(String table, Schema schema) {
    for (Types.NestedField column : schema.columns()) {
      if (column.type().typeId() == Type.TypeID.UNKNOWN) {
        continue; // a top-level unknown column is left out of the data files and reads as NULL
      }
      if (column.type().typeId() == Type.TypeID.VARIANT || isGeospatial(column.type())) {
        continue; // a top-level variant, geometry or geography column is carried end to end
      }
      Optional<Unsupported> bad = unsupported(column.name(), column.type());
      if (bad.isPresent()) {
        throw SeException.invalid("table %s: column %s has type %s, which ingestion does not support yet%s",
            table, bad.get().path(), bad.get().type(), reason(bad.get().type()));
      }
    }
  }

  /** Whether {@code type} is a geometry or a geography (of any CRS and edge algorithm). */
  public static boolean isGeospatial(Type type) {
    return type.typeId() == Type.TypeID.GEOMETRY || type.typeId() == Type.TypeID.GEOGRAPHY;
  }

  private static String reason(Type type) {
    return isGeospatial(type) ? " (only as a top-level column)" : "";
  }

  private record Unsupported(String path, Type type) {}

  private static Optional<Unsupported> unsupported(String path, Type type) {
    switch (type.typeId()) {
      case BOOLEAN, INTEGER, LONG, FLOAT, DOUBLE, DECIMAL, DATE, TIME, TIMESTAMP, TIMESTAMP_NANO, STRING, UUID, FIXED,
          BINARY -> {
        return Optional.empty();
      }
      case STRUCT -> {
        for (Types.NestedField field : type.asStructType().fields()) {
          Optional<Unsupported> bad = unsupported(path + "." + field.name(), field.type());
          if (bad.isPresent()) {
            return bad;
          }
        }
        return Optional.empty();
      }
      case LIST -> {
        return unsupported(path + ".element", type.asListType().elementType());
      }
      case MAP -> {
        Optional<Unsupported> key = unsupported(path + ".key", type.asMapType().keyType());
        return key.isPresent() ? key : unsupported(path + ".value", type.asMapType().valueType());
      }
      default -> {
        return Optional.of(new Unsupported(path, type));
      }
    }
  }
}
