package io.storageengine.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.math.BigDecimal;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.Decimal256Vector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.NullVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ViewVarCharVector;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * The values bound to a statement's parameters, in parameter order. They travel inside the
 * self-contained statement handle (JSON, see {@link StatementHandle}) and are handed to DuckDB
 * through a real prepared statement, never spliced into SQL text: a value can only ever be a
 * value.
 *
 * <p>Each value keeps the kind it arrived as (its Arrow type family); {@link #check} compares the
 * kinds with the parameter types DuckDB infers for the statement.
 */
final class QueryParameters {
  /** No values bound. */
  static final QueryParameters NONE = new QueryParameters(List.of());

  /** The kind of a bound value: the Arrow type family it arrived as. */
  enum Kind {
    NULL("null"), INTEGER("integer"), FLOAT("floating point"), DECIMAL("decimal"), STRING("utf8"),
    BOOLEAN("bool"), DATE("date"), TIME("time"), TIMESTAMP("timestamp"),
    TIMESTAMP_TZ("timestamp with time zone"), BINARY("binary");

    final String label;

    Kind(String label) {
      this.label = label;
    }
  }

  /** One bound value; {@code text} is its exact text form (null for {@link Kind#NULL}). */
  record Value(Kind kind, String text) {}

  private final List<Value> values;

  QueryParameters(List<Value> values) {
    this.values = List.copyOf(values);
  }

  List<Value> values() {
    return values;
  }

  int size() {
    return values.size();
  }

  boolean isEmpty() {
    return values.isEmpty();
  }

  /**
   * The values of a parameter batch (one Arrow column per parameter). Exactly one row is
   * accepted: the server keeps no state, so each execution binds one set of values and a batch of
   * several rows is refused rather than silently reduced to one.
   */
  static QueryParameters fromBatch(VectorSchemaRoot root, int rows) {
    if (rows == 0 && root.getFieldVectors().isEmpty()) {
      return NONE;
    }
    if (rows != 1) {
      throw SeException.invalid("parameter batch has %d rows: bind exactly one row of values per execution "
          + "(run the statement once per set of values)", rows);
    }
    List<Value> values = new ArrayList<>();
    List<FieldVector> vectors = root.getFieldVectors();
    for (int i = 0; i < vectors.size(); i++) {
      values.add(value(i + 1, vectors.get(i)));
    }
    return new QueryParameters(values);
  }

  private static Value value(int index, FieldVector vector) {
    if (vector instanceof NullVector || vector.isNull(0)) {
      return new Value(Kind.NULL, null);
    }
    if (vector instanceof UInt8Vector unsigned) {
      return new Value(Kind.INTEGER, unsigned.getObjectNoOverflow(0).toString());
    }
    if (vector instanceof BaseIntVector integer) {
      return new Value(Kind.INTEGER, Long.toString(integer.getValueAsLong(0)));
    }
    if (vector instanceof Float4Vector f) {
      return new Value(Kind.FLOAT, Float.toString(f.get(0)));
    }
    if (vector instanceof Float8Vector d) {
      return new Value(Kind.FLOAT, Double.toString(d.get(0)));
    }
    if (vector instanceof DecimalVector decimal) {
      return new Value(Kind.DECIMAL, decimal.getObject(0).toPlainString());
    }
    if (vector instanceof Decimal256Vector decimal) {
      return new Value(Kind.DECIMAL, decimal.getObject(0).toPlainString());
    }
    if (vector instanceof VarCharVector || vector instanceof LargeVarCharVector || vector instanceof ViewVarCharVector) {
      return new Value(Kind.STRING, vector.getObject(0).toString());
    }
    if (vector instanceof BitVector bit) {
      return new Value(Kind.BOOLEAN, Boolean.toString(bit.get(0) != 0));
    }
    if (vector instanceof DateDayVector day) {
      return new Value(Kind.DATE, LocalDate.ofEpochDay(day.get(0)).toString());
    }
    if (vector instanceof DateMilliVector milli) {
      return new Value(Kind.DATE, LocalDate.ofEpochDay(Math.floorDiv(milli.get(0), 86_400_000L)).toString());
    }
    if (vector instanceof TimeMicroVector micro) {
      return new Value(Kind.TIME, LocalTime.ofNanoOfDay(micro.get(0) * 1_000L).toString());
    }
    if (vector instanceof TimeMilliVector milli) {
      return new Value(Kind.TIME, LocalTime.ofNanoOfDay(milli.get(0) * 1_000_000L).toString());
    }
    if (vector instanceof TimeNanoVector nano) {
      return new Value(Kind.TIME, LocalTime.ofNanoOfDay(nano.get(0)).toString());
    }
    if (vector instanceof TimeSecVector sec) {
      return new Value(Kind.TIME, LocalTime.ofSecondOfDay(sec.get(0)).toString());
    }
    if (vector instanceof TimeStampVector timestamp) {
      ArrowType.Timestamp type = (ArrowType.Timestamp) vector.getField().getType();
      Instant instant = instant(timestamp.get(0), type.getUnit());
      return type.getTimezone() == null || type.getTimezone().isEmpty()
          ? new Value(Kind.TIMESTAMP, LocalDateTime.ofInstant(instant, ZoneOffset.UTC).toString())
          : new Value(Kind.TIMESTAMP_TZ, instant.toString());
    }
    if (vector instanceof VarBinaryVector || vector instanceof LargeVarBinaryVector || vector instanceof FixedSizeBinaryVector) {
      return new Value(Kind.BINARY, Base64.getEncoder().encodeToString((byte[]) vector.getObject(0)));
    }
    throw SeException.invalid("parameter %d: Arrow type %s cannot be bound (supported: integers, floating point, "
        + "decimal, utf8, bool, date, time, timestamp, binary, null)", index, vector.getField().getType());
  }

  private static Instant instant(long value, org.apache.arrow.vector.types.TimeUnit unit) {
    switch (unit) {
      case SECOND: return Instant.ofEpochSecond(value);
      case MILLISECOND: return Instant.ofEpochMilli(value);
      case MICROSECOND: return Instant.ofEpochSecond(Math.floorDiv(value, 1_000_000L), Math.floorMod(value, 1_000_000L) * 1_000L);
      default: return Instant.ofEpochSecond(Math.floorDiv(value, 1_000_000_000L), Math.floorMod(value, 1_000_000_000L));
    }
  }

  /**
   * Checks the values against the statement's parameter types as DuckDB infers them:
   * INVALID_ARGUMENT naming the count, or the first parameter (1-based) whose value does not fit
   * and the type it expects. A NULL fits every parameter; a parameter whose type DuckDB cannot
   * infer accepts any value.
   */
  void check(List<String> parameterTypes) {
    if (parameterTypes.size() != values.size()) {
      throw SeException.invalid("statement has %d parameter%s, but %d value%s bound", parameterTypes.size(),
          parameterTypes.size() == 1 ? "" : "s", values.size(), values.size() == 1 ? " was" : "s were");
    }
    for (int i = 0; i < values.size(); i++) {
      Kind kind = values.get(i).kind();
      String expected = parameterTypes.get(i);
      if (kind != Kind.NULL && !ParameterTypes.accepts(expected, kind)) {
        throw SeException.invalid("parameter %d: expected %s, got %s", i + 1, ParameterTypes.describe(expected), kind.label);
      }
    }
  }

  /** Binds the values to {@code statement} (1-based, in order), as the Java types DuckDB's JDBC driver maps exactly. */
  void bind(PreparedStatement statement) throws SQLException {
    for (int i = 0; i < values.size(); i++) {
      statement.setObject(i + 1, javaValue(values.get(i)));
    }
  }

  private static Object javaValue(Value value) {
    String text = value.text();
    switch (value.kind()) {
      case NULL: return null;
      case INTEGER: {
        java.math.BigInteger exact = new java.math.BigInteger(text);
        return exact.bitLength() < 64 ? (Object) exact.longValue() : new BigDecimal(exact);
      }
      case FLOAT: return Double.valueOf(text);
      case DECIMAL: return new BigDecimal(text);
      case STRING: return text;
      case BOOLEAN: return Boolean.valueOf(text);
      case DATE: return LocalDate.parse(text);
      case TIME: return LocalTime.parse(text);
      case TIMESTAMP: return LocalDateTime.parse(text);
      case TIMESTAMP_TZ: return Instant.parse(text).atOffset(ZoneOffset.UTC);
      case BINARY: return Base64.getDecoder().decode(text);
      default: throw new IllegalStateException("unknown parameter kind " + value.kind());
    }
  }

  /** The value of parameter {@code identifier} (DuckDB's 1-based number) as a pruning literal, or null. */
  Value parameter(String identifier) {
    try {
      int index = Integer.parseInt(identifier);
      return index >= 1 && index <= values.size() ? values.get(index - 1) : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  ArrayNode toJson() {
    ArrayNode array = Json.MAPPER.createArrayNode();
    for (Value value : values) {
      var node = array.addObject();
      node.put("kind", value.kind().name().toLowerCase(Locale.ROOT));
      if (value.text() == null) {
        node.putNull("value");
      } else {
        node.put("value", value.text());
      }
    }
    return array;
  }

  /** Parses {@link #toJson}; a missing node is no values. Anything malformed is INVALID_ARGUMENT. */
  static QueryParameters fromJson(JsonNode node) {
    if (node == null || node.isMissingNode() || node.isNull()) {
      return NONE;
    }
    if (!node.isArray()) {
      throw SeException.invalid("statement handle: parameters must be a list");
    }
    List<Value> values = new ArrayList<>();
    for (JsonNode entry : node) {
      Kind kind;
      try {
        kind = Kind.valueOf(entry.path("kind").asText().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw SeException.invalid("statement handle: unknown parameter kind `%s`", entry.path("kind").asText());
      }
      JsonNode text = entry.path("value");
      if (kind == Kind.NULL) {
        values.add(new Value(kind, null));
        continue;
      }
      if (!text.isTextual()) {
        throw SeException.invalid("statement handle: parameter %d has no value", values.size() + 1);
      }
      Value value = new Value(kind, text.asText());
      try {
        javaValue(value);
      } catch (RuntimeException e) {
        throw SeException.invalid("statement handle: parameter %d is not a valid %s", values.size() + 1, kind.label);
      }
      values.add(value);
    }
    return new QueryParameters(values);
  }
}
