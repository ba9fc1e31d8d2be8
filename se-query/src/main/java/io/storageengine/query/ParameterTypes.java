package io.storageengine.query;

import io.storageengine.query.QueryParameters.Kind;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * Statement parameter types as DuckDB infers them ({@code ParameterMetaData} type names), the
 * Arrow fields reported for them in Flight SQL's parameter schema, and which bound value kinds
 * each accepts. A parameter whose type DuckDB cannot infer from its context ({@code SELECT ?})
 * is reported as utf8 and accepts any value; types without a natural Arrow parameter type
 * (lists, structs, intervals, ...) are reported as utf8 and accept text DuckDB converts.
 */
final class ParameterTypes {
  private static final Pattern DECIMAL = Pattern.compile("DECIMAL\\((\\d+),\\s*(\\d+)\\)");
  private static final Set<String> INTEGERS = Set.of("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
      "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT");
  private static final Set<String> UNKNOWN = Set.of("INVALID", "UNKNOWN", "ANY", "NULL", "SQLNULL");

  private ParameterTypes() {}

  /** Whether DuckDB could not infer the parameter's type (it is then declared, and bound, as a string). */
  static boolean isUnknown(String duckdbType) {
    return UNKNOWN.contains(normalize(duckdbType));
  }

  /** The Arrow field of parameter {@code index} (1-based) of DuckDB type {@code duckdbType}. */
  static Field arrowField(int index, String duckdbType) {
    return new Field("$" + index, FieldType.nullable(arrowType(duckdbType)), null);
  }

  private static ArrowType arrowType(String duckdbType) {
    String type = normalize(duckdbType);
    Matcher decimal = DECIMAL.matcher(type);
    if (decimal.matches()) {
      return new ArrowType.Decimal(Integer.parseInt(decimal.group(1)), Integer.parseInt(decimal.group(2)), 128);
    }
    switch (type) {
      case "BOOLEAN": return ArrowType.Bool.INSTANCE;
      case "TINYINT": return new ArrowType.Int(8, true);
      case "SMALLINT":
      case "UTINYINT": return new ArrowType.Int(16, true);
      case "INTEGER":
      case "USMALLINT": return new ArrowType.Int(32, true);
      case "BIGINT":
      case "UINTEGER": return new ArrowType.Int(64, true);
      case "UBIGINT":
      case "HUGEINT":
      case "UHUGEINT": return new ArrowType.Decimal(38, 0, 128);
      case "FLOAT": return new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
      case "DOUBLE": return new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
      case "DATE": return new ArrowType.Date(DateUnit.DAY);
      // Times and timestamps are declared in milliseconds: the Flight SQL JDBC driver (18.3)
      // writes epoch milliseconds into the parameter vector whatever unit is declared. Other
      // clients may send any unit; finer values are kept (DuckDB holds microseconds).
      case "TIME": return new ArrowType.Time(TimeUnit.MILLISECOND, 32);
      case "TIMESTAMP":
      case "TIMESTAMP_S":
      case "TIMESTAMP_MS":
      case "TIMESTAMP_NS": return new ArrowType.Timestamp(TimeUnit.MILLISECOND, null);
      case "TIMESTAMP WITH TIME ZONE": return new ArrowType.Timestamp(TimeUnit.MILLISECOND, "UTC");
      case "BLOB": return ArrowType.Binary.INSTANCE;
      default: return ArrowType.Utf8.INSTANCE;
    }
  }

  /** Whether a value of {@code kind} may be bound to a parameter of DuckDB type {@code duckdbType}. */
  static boolean accepts(String duckdbType, Kind kind) {
    String type = normalize(duckdbType);
    if (UNKNOWN.contains(type)) {
      return true;
    }
    if (INTEGERS.contains(type)) {
      return kind == Kind.INTEGER || (kind == Kind.DECIMAL && !Set.of("TINYINT", "SMALLINT", "INTEGER", "BIGINT",
          "UTINYINT", "USMALLINT", "UINTEGER").contains(type));
    }
    if (DECIMAL.matcher(type).matches()) {
      return kind == Kind.DECIMAL || kind == Kind.INTEGER;
    }
    switch (type) {
      case "FLOAT":
      case "DOUBLE": return kind == Kind.FLOAT || kind == Kind.INTEGER || kind == Kind.DECIMAL;
      case "BOOLEAN": return kind == Kind.BOOLEAN;
      case "DATE": return kind == Kind.DATE;
      case "TIME": return kind == Kind.TIME;
      case "TIMESTAMP":
      case "TIMESTAMP_S":
      case "TIMESTAMP_MS":
      case "TIMESTAMP_NS": return kind == Kind.TIMESTAMP;
      case "TIMESTAMP WITH TIME ZONE": return kind == Kind.TIMESTAMP_TZ;
      case "BLOB": return kind == Kind.BINARY;
      default: return kind == Kind.STRING;
    }
  }

  /** The type as named in error messages (DuckDB's name; unknown types say so). */
  static String describe(String duckdbType) {
    String type = normalize(duckdbType);
    return UNKNOWN.contains(type) ? "any value" : type;
  }

  private static String normalize(String duckdbType) {
    return duckdbType == null ? "UNKNOWN" : duckdbType.trim().toUpperCase(Locale.ROOT);
  }
}
