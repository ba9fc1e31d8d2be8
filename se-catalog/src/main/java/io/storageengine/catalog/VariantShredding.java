package io.storageengine.catalog;

import io.storageengine.common.SeException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * How the data files of a table shred one variant column: the value of the table property
 * {@code se.variant.shredding.<column>} ({@link TableProperties#VARIANT_SHREDDING_PREFIX}).
 *
 * <ul>
 *   <li>absent, blank or {@code auto}: the Parquet writer (DuckDB) picks the fields and types
 *       it finds in each row group;
 *   <li>{@code off}: no shredding, every value stays in the variant's binary {@code value};
 *   <li>otherwise the typed fields of an object variant, in the schema syntax of
 *       {@code se table create} ({@code user_id bigint, country string, geo struct<lat:
 *       double, lon: double>, tags list<string>}): each field's values whose variant type is the
 *       field's type are written to a typed column with statistics, so filters on it prune row
 *       groups and files; other values (another type, a field the list does not name) stay in
 *       the binary {@code value}. Field types: boolean, int, bigint, float, double, decimal,
 *       date, time, timestamp, timestamptz, timestamp_ns, timestamptz_ns, string, binary, uuid,
 *       and struct and list of these; {@code variant} leaves a field to the writer.
 * </ul>
 *
 * <p>{@code auto} and {@code off} are case-insensitive. A property for a column that is not a
 * top-level variant, or a field list that does not parse, is INVALID_ARGUMENT naming the table,
 * the property and the value. A property for a column the table does not have (renamed or dropped
 * since) is ignored: the files of the column's new name are shredded by its own property, or by
 * the writer.
 *
 * @param mode auto, off or typed
 * @param fields the typed fields ({@link Mode#TYPED} only; else null)
 */
public record VariantShredding(Mode mode, Types.StructType fields) {
  /** How a variant column is shredded. */
  public enum Mode { AUTO, OFF, TYPED }

  /** The writer's choice per row group. */
  public static final VariantShredding AUTO = new VariantShredding(Mode.AUTO, null);

  /**
   * The shredding of every variant column that does not use {@link #AUTO}, by column name, of a
   * table named {@code table} with {@code schema} and {@code properties}; read through
   * {@link TableSettings#variantShredding()}.
   */
  public static Map<String, VariantShredding> of(String table, Schema schema, Map<String, String> properties) {
    Map<String, VariantShredding> result = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : properties.entrySet()) {
      if (!e.getKey().startsWith(TableProperties.VARIANT_SHREDDING_PREFIX)) {
        continue;
      }
      String column = e.getKey().substring(TableProperties.VARIANT_SHREDDING_PREFIX.length());
      Types.NestedField field = schema.asStruct().field(column);
      if (field == null) {
        // A column renamed or dropped since the property was set: nothing to shred under that
        // name, and the table must keep working (Iceberg renames no se.* property).
        continue;
      }
      if (!field.type().isVariantType()) {
        throw SeException.invalid("table %s: %s '%s': column %s is %s, not variant", table, e.getKey(), e.getValue(),
            column, field.type());
      }
      VariantShredding shredding = parse(table, e.getKey(), e.getValue());
      if (shredding.mode() != Mode.AUTO) {
        result.put(field.name(), shredding);
      }
    }
    return result;
  }

  /** One property's value as the rules above read it. */
  public static VariantShredding parse(String table, String property, String value) {
    if (value == null || value.isBlank() || value.trim().equalsIgnoreCase("auto")) {
      return AUTO;
    }
    if (value.trim().equalsIgnoreCase("off")) {
      return new VariantShredding(Mode.OFF, null);
    }
    Schema fields;
    try {
      fields = TableSpecParser.parseSchema(value);
    } catch (SeException e) {
      throw SeException.invalid("table %s: %s '%s' is not auto, off or a list of typed fields: %s", table,
          property, value, e.getMessage());
    }
    for (Types.NestedField f : fields.columns()) {
      String bad = unsupported(f.type());
      if (bad != null) {
        throw SeException.invalid("table %s: %s '%s': field %s: %s cannot be shredded (only primitives, struct and"
            + " list)", table, property, value, f.name(), bad);
      }
    }
    return new VariantShredding(Mode.TYPED, fields.asStruct());
  }

  /** The part of {@code type} a variant cannot be shredded into, or null. */
  private static String unsupported(Type type) {
    switch (type.typeId()) {
      case STRUCT -> {
        for (Types.NestedField f : type.asStructType().fields()) {
          String bad = unsupported(f.type());
          if (bad != null) {
            return bad;
          }
        }
        return null;
      }
      case LIST -> {
        return unsupported(type.asListType().elementType());
      }
      case MAP, GEOMETRY, GEOGRAPHY, UNKNOWN, FIXED -> {
        return type.toString().toLowerCase(Locale.ROOT);
      }
      default -> {
        return null;
      }
    }
  }
}
