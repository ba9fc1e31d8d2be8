package io.storageengine.ingest;

import io.storageengine.catalog.GeoValues;
import io.storageengine.common.SeException;
import java.nio.charset.StandardCharsets;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VariableWidthFieldVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Converts a column into a geometry or geography column, whose table layout is Arrow binary
 * holding ISO WKB (see {@link GeoValues}); the CRS and edge algorithm are the column's type, not
 * part of the values. Two incoming forms are accepted:
 *
 * <ul>
 *   <li>WKB (binary, large binary or binary view): every value is checked, and kept as is;
 *   <li>WKT (utf8, large utf8 or utf8 view): every value is parsed and written as WKB.
 * </ul>
 *
 * <p>Either way a bad value is INVALID_ARGUMENT naming the column and the row, so nothing
 * reconciliation could not write reaches the WAL.
 */
final class GeometryConverter extends ColumnConverter {
  private final boolean wkt;
  private final boolean identity;
  private final boolean geography;

  private GeometryConverter(String path, Field target, boolean wkt, boolean identity, boolean geography) {
    super(path, target);
    this.wkt = wkt;
    this.identity = identity;
    this.geography = geography;
  }

  /**
   * The converter for {@code source} into a geometry or (with {@code geography}) a geography
   * column, or null when its type cannot be one. A geography's coordinates must be longitudes and
   * latitudes ({@link GeoValues#checkGeographyWkb}), the bounds the spec sets for its CRS.
   */
  static ColumnConverter create(String path, Field source, Field target, boolean geography) {
    ArrowType t = source.getType();
    if (t instanceof ArrowType.Utf8 || t instanceof ArrowType.LargeUtf8 || t instanceof ArrowType.Utf8View) {
      return new GeometryConverter(path, target, true, false, geography);
    }
    if (t instanceof ArrowType.Binary || t instanceof ArrowType.LargeBinary || t instanceof ArrowType.BinaryView) {
      return new GeometryConverter(path, target, false, t instanceof ArrowType.Binary, geography);
    }
    return null;
  }

  @Override
  boolean identity() {
    return identity;
  }

  @Override
  FieldVector convert(FieldVector source, BufferAllocator allocator) {
    VariableWidthFieldVector in = (VariableWidthFieldVector) source;
    int rows = source.getValueCount();
    if (identity) {
      for (int row = 0; row < rows; row++) {
        if (!in.isNull(row)) {
          wkb(in.get(row), row);
        }
      }
      return source;
    }
    VarBinaryVector out = (VarBinaryVector) target.createVector(allocator);
    try {
      out.allocateNew(rows);
      for (int row = 0; row < rows; row++) {
        if (in.isNull(row)) {
          out.setNull(row);
        } else {
          byte[] value = in.get(row);
          out.setSafe(row, wkt ? fromWkt(new String(value, StandardCharsets.UTF_8), row) : wkb(value, row));
        }
      }
      out.setValueCount(rows);
      return out;
    } catch (RuntimeException e) {
      out.close();
      throw e;
    }
  }

  private byte[] wkb(byte[] value, int row) {
    try {
      if (geography) {
        GeoValues.checkGeographyWkb(value);
      } else {
        GeoValues.checkWkb(value);
      }
      return value;
    } catch (IllegalArgumentException e) {
      throw SeException.invalid("column `%s`: invalid %s at row %d: %s", path, geography ? "geography WKB" : "WKB",
          row, e.getMessage());
    }
  }

  private byte[] fromWkt(String text, int row) {
    byte[] wkb;
    try {
      wkb = GeoValues.wktToWkb(text);
    } catch (IllegalArgumentException e) {
      throw SeException.invalid("column `%s`: invalid WKT at row %d: %s", path, row, e.getMessage());
    }
    if (geography) {
      try {
        GeoValues.checkGeographyWkb(wkb);
      } catch (IllegalArgumentException e) {
        throw SeException.invalid("column `%s`: invalid geography WKT at row %d: %s", path, row, e.getMessage());
      }
    }
    return wkb;
  }
}
