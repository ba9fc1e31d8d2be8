package io.storageengine.catalog;

import io.storageengine.catalog.SpecTokenizer.Token;
import io.storageengine.common.SeException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.NullOrder;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.expressions.Term;
import org.apache.iceberg.transforms.Transforms;
import org.apache.iceberg.types.EdgeAlgorithm;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

/**
 * Parses the table texts of {@code se table create}.
 *
 * <p>Schema: comma-separated {@code name type [not null] [default value]}; columns are optional
 * unless marked {@code not null}. A default (primitive columns and struct fields, at any depth) is a number,
 * {@code true}/{@code false} or a {@code '...'} string ({@code ''} for a quote): ISO-8601 for
 * dates, times and timestamps (timestamptz with an offset), hex for binary and fixed; it becomes
 * the column's {@code initial-default} and {@code write-default} (Iceberg v3). Types (case-insensitive): {@code boolean}, {@code int}, {@code bigint}
 * ({@code long}), {@code float}, {@code double}, {@code decimal(p,s)}, {@code date}, {@code time},
 * {@code timestamp}, {@code timestamptz}, {@code timestamp_ns}, {@code timestamptz_ns},
 * {@code string}, {@code uuid}, {@code binary}, {@code fixed(n)}, {@code variant}, {@code unknown} (always null, so
 * never {@code not null}), {@code geometry}, {@code geometry(crs)},
 * {@code geography}, {@code geography(crs[, algorithm])} (the CRS quoted or as is, default
 * {@code OGC:CRS84}; the edge algorithm default {@code spherical}), {@code list<T [not null]>},
 * {@code map<K, V [not null]>}, {@code struct<name: T [not null], ...>}. Names may be quoted with
 * {@code "..."} or {@code `...`}. Field ids are assigned fresh, top-level columns first.
 *
 * <p>Partition spec: comma-separated {@code column} (identity), {@code identity(c)},
 * {@code year(c)}, {@code month(c)}, {@code day(c)}, {@code hour(c)}, {@code bucket(n, c)},
 * {@code truncate(w, c)} (plural forms such as {@code days(c)} also accepted).
 *
 * <p>Sort order: comma-separated terms (a column or one of the transforms above), each followed
 * by optional {@code asc|desc} and {@code nulls first|last} (default: asc, nulls first for asc
 * and nulls last for desc).
 *
 * <p>Every error is {@code SeException(INVALID_ARGUMENT)} naming the bad part and its 1-based
 * position, e.g. {@code schema: unknown type 'strng' for column 'name' at position 6}.
 */
public final class TableSpecParser {
  private TableSpecParser() {}

  /** The schema the text describes, with fresh field ids. */
  public static Schema parseSchema(String text) {
    if (text == null || text.isBlank()) {
      throw SeException.invalid("schema: no columns given");
    }
    SpecTokenizer tokens = new SpecTokenizer("schema", text);
    AtomicInteger ids = new AtomicInteger();
    List<Types.NestedField> columns = new ArrayList<>();
    Set<String> names = new HashSet<>();
    do {
      Token nameToken = tokens.expectWord("a column name");
      String name = nameToken.text();
      if (!names.add(name.toLowerCase(Locale.ROOT))) {
        throw tokens.error(nameToken, "duplicate column '%s'", name);
      }
      columns.add(field(tokens, ids, name, "column '" + name + "'"));
      if (!tokens.atEnd() && !tokens.peek().isSymbol(',')) {
        throw tokens.error(tokens.peek(), "unexpected %s after column '%s' (expected ',' or end of text)",
            tokens.peek().describe(), name);
      }
    } while (tokens.accept(','));
    AtomicInteger fresh = new AtomicInteger();
    return TypeUtil.assignFreshIds(new Schema(columns), fresh::incrementAndGet);
  }

  /** The partition spec {@code text} describes over {@code schema}; blank means unpartitioned. */
  public static PartitionSpec parsePartitionSpec(Schema schema, String text) {
    if (text == null || text.isBlank()) {
      return PartitionSpec.unpartitioned();
    }
    SpecTokenizer tokens = new SpecTokenizer("partition", text);
    PartitionSpec.Builder builder = PartitionSpec.builderFor(schema);
    do {
      Token start = tokens.peek();
      TransformTerm term = transformTerm(tokens, schema);
      try {
        switch (term.transform()) {
          case "identity" -> builder.identity(term.column());
          case "year" -> builder.year(term.column());
          case "month" -> builder.month(term.column());
          case "day" -> builder.day(term.column());
          case "hour" -> builder.hour(term.column());
          case "bucket" -> builder.bucket(term.column(), term.argument());
          case "truncate" -> builder.truncate(term.column(), term.argument());
          default -> throw new IllegalStateException("unhandled transform " + term.transform());
        }
      } catch (IllegalArgumentException | IllegalStateException e) {
        throw tokens.error(start, "cannot partition by %s: %s", term.text(), e.getMessage());
      }
      expectSeparator(tokens, term);
    } while (tokens.accept(','));
    return builder.build();
  }

  /** The sort order {@code text} describes over {@code schema}; blank means unsorted. */
  public static SortOrder parseSortOrder(Schema schema, String text) {
    if (text == null || text.isBlank()) {
      return SortOrder.unsorted();
    }
    SpecTokenizer tokens = new SpecTokenizer("sort order", text);
    SortOrder.Builder builder = SortOrder.builderFor(schema);
    do {
      Token start = tokens.peek();
      TransformTerm term = transformTerm(tokens, schema);
      boolean descending = false;
      if (tokens.acceptKeyword("desc")) {
        descending = true;
      } else {
        tokens.acceptKeyword("asc");
      }
      NullOrder nulls = descending ? NullOrder.NULLS_LAST : NullOrder.NULLS_FIRST;
      if (tokens.acceptKeyword("nulls")) {
        Token which = tokens.take();
        if (which.isKeyword("first")) {
          nulls = NullOrder.NULLS_FIRST;
        } else if (which.isKeyword("last")) {
          nulls = NullOrder.NULLS_LAST;
        } else {
          throw tokens.error(which, "expected 'first' or 'last' after 'nulls', found %s", which.describe());
        }
      }
      try {
        Term icebergTerm = term.toTerm();
        if (descending) {
          builder.desc(icebergTerm, nulls);
        } else {
          builder.asc(icebergTerm, nulls);
        }
      } catch (IllegalArgumentException | IllegalStateException e) {
        throw tokens.error(start, "cannot sort by %s: %s", term.text(), e.getMessage());
      }
      expectSeparator(tokens, term);
    } while (tokens.accept(','));
    return builder.build();
  }

  // ---- schema ----

  private static Types.NestedField field(SpecTokenizer tokens, AtomicInteger ids, String name, String what) {
    int id = ids.incrementAndGet();
    Token typeToken = tokens.peek();
    Type type = type(tokens, ids, what);
    boolean required = notNull(tokens);
    Literal<?> defaultValue = null;
    if (tokens.peek().isKeyword("default")) {
      tokens.take();
      defaultValue = defaultValue(tokens, type, what);
      required = required || notNull(tokens);
    }
    if (required && type.typeId() == Type.TypeID.UNKNOWN) {
      // The spec: an unknown column is always null, so it must be optional.
      throw tokens.error(typeToken, "%s of type unknown cannot be not null (its values are always null)", what);
    }
    return Types.NestedField.builder().withName(name).withId(id).ofType(type).isOptional(!required)
        .withInitialDefault(defaultValue).withWriteDefault(defaultValue).build();
  }

  /**
   * The default value {@code text} describes for a column of {@code type} named {@code column}
   * (the value part of {@code se table alter --set-default}, in the syntax of a schema's
   * {@code default}); {@code null} for {@code null} (no default).
   */
  public static Literal<?> parseDefault(Type type, String column, String text) {
    SpecTokenizer tokens = new SpecTokenizer("default", text == null ? "" : text);
    Literal<?> value = defaultValue(tokens, type, "column '" + column + "'");
    if (!tokens.atEnd()) {
      throw tokens.error(tokens.peek(), "unexpected %s after the default of column '%s'", tokens.peek().describe(), column);
    }
    return value;
  }

  /** The default value literal of a column of {@code type}; {@code null} for {@code default null}. */
  private static Literal<?> defaultValue(SpecTokenizer tokens, Type type, String what) {
    Token t = tokens.take();
    if (t.isKeyword("null")) {
      return null;
    }
    if (type.typeId() == Type.TypeID.UNKNOWN) {
      throw tokens.error(t, "%s of type unknown cannot have a default other than null", what);
    }
    if (!type.isPrimitiveType()) {
      throw tokens.error(t, "%s of type %s cannot have a default (only primitive columns can)", what, type);
    }
    Literal<?> literal;
    try {
      literal = switch (t.kind()) {
        case NUMBER -> switch (type.typeId()) {
          case INTEGER -> Literal.of(Integer.parseInt(t.text()));
          case LONG -> Literal.of(Long.parseLong(t.text()));
          case FLOAT -> Literal.of(Float.parseFloat(t.text()));
          case DOUBLE -> Literal.of(Double.parseDouble(t.text()));
          case DECIMAL -> Literal.of(new BigDecimal(t.text()).setScale(((Types.DecimalType) type).scale()));
          default -> null;
        };
        case STRING -> type.typeId() == Type.TypeID.BOOLEAN ? null : Literal.of(t.text()).to(type);
        case WORD -> !t.quoted() && type.typeId() == Type.TypeID.BOOLEAN
            && (t.isKeyword("true") || t.isKeyword("false")) ? Literal.of(t.isKeyword("true")) : null;
        default -> null;
      };
    } catch (RuntimeException e) {
      literal = null; // NumberFormatException, ArithmeticException (scale), DateTimeParseException ...
    }
    if (literal != null && type.typeId() == Type.TypeID.DECIMAL
        && ((BigDecimal) literal.value()).precision() > ((Types.DecimalType) type).precision()) {
      literal = null;
    }
    if (literal == null) {
      throw tokens.error(t, "default %s of %s is not a valid %s%s", t.describe(), what, type, defaultHint(type));
    }
    return literal;
  }

  private static String defaultHint(Type type) {
    return switch (type.typeId()) {
      case BOOLEAN -> " (true or false)";
      case INTEGER, LONG, FLOAT, DOUBLE, DECIMAL -> " (a number)";
      case DATE -> " (a string such as '2026-01-31')";
      case TIME -> " (a string such as '10:11:12.5')";
      case TIMESTAMP, TIMESTAMP_NANO -> ((type instanceof Types.TimestampType ts && ts.shouldAdjustToUTC())
          || (type instanceof Types.TimestampNanoType tn && tn.shouldAdjustToUTC()))
          ? " (a string such as '2026-01-31T10:11:12+00:00')" : " (a string such as '2026-01-31T10:11:12')";
      case FIXED, BINARY -> " (a string of hex digits)";
      default -> " (a string)";
    };
  }

  private static boolean notNull(SpecTokenizer tokens) {
    if (tokens.peek().isKeyword("not")) {
      tokens.take();
      Token t = tokens.take();
      if (!t.isKeyword("null")) {
        throw tokens.error(t, "expected 'null' after 'not', found %s", t.describe());
      }
      return true;
    }
    tokens.acceptKeyword("null");
    return false;
  }

  /**
   * A CRS: a quoted string, or the text of the tokens up to the next {@code ,} or {@code )}
   * ({@code OGC:CRS84}, {@code srid:4326}).
   */
  private static String crs(SpecTokenizer tokens, String what) {
    Token first = tokens.peek();
    if (first.kind() == SpecTokenizer.Kind.STRING) {
      tokens.take();
      return first.text();
    }
    StringBuilder crs = new StringBuilder();
    while (!tokens.peek().isSymbol(',') && !tokens.peek().isSymbol(')') && tokens.peek().kind() != SpecTokenizer.Kind.END) {
      crs.append(tokens.take().text());
    }
    if (crs.isEmpty()) {
      throw tokens.error(first, "expected a CRS for %s, found %s", what, first.describe());
    }
    return crs.toString();
  }

  private static Type type(SpecTokenizer tokens, AtomicInteger ids, String what) {
    Token t = tokens.take();
    if (t.kind() != SpecTokenizer.Kind.WORD || t.quoted()) {
      throw tokens.error(t, "expected a type for %s, found %s", what, t.describe());
    }
    switch (t.lower()) {
      case "boolean", "bool":
        return Types.BooleanType.get();
      case "int", "integer", "int32":
        return Types.IntegerType.get();
      case "bigint", "long", "int64":
        return Types.LongType.get();
      case "float", "real", "float32":
        return Types.FloatType.get();
      case "double", "float64":
        return Types.DoubleType.get();
      case "date":
        return Types.DateType.get();
      case "time":
        return Types.TimeType.get();
      case "timestamp":
        return Types.TimestampType.withoutZone();
      case "timestamptz":
        return Types.TimestampType.withZone();
      case "timestamp_ns":
        return Types.TimestampNanoType.withoutZone();
      case "timestamptz_ns":
        return Types.TimestampNanoType.withZone();
      case "string", "varchar", "text":
        return Types.StringType.get();
      case "uuid":
        return Types.UUIDType.get();
      case "variant":
        return Types.VariantType.get();
      case "unknown":
        return Types.UnknownType.get();
      case "geometry": {
        if (!tokens.accept('(')) {
          return Types.GeometryType.crs84();
        }
        String crs = crs(tokens, what);
        tokens.expect(')', "after the geometry CRS");
        return Types.GeometryType.of(crs);
      }
      case "geography": {
        if (!tokens.accept('(')) {
          return Types.GeographyType.crs84();
        }
        String crs = crs(tokens, what);
        EdgeAlgorithm algorithm = Types.GeographyType.DEFAULT_ALGORITHM;
        if (tokens.accept(',')) {
          Token name = tokens.take();
          try {
            algorithm = EdgeAlgorithm.fromName(name.text());
          } catch (IllegalArgumentException e) {
            throw tokens.error(name, "unknown edge algorithm %s of %s (spherical, vincenty, thomas, andoyer or karney)",
                name.describe(), what);
          }
        }
        tokens.expect(')', "after the geography CRS and edge algorithm");
        return Types.GeographyType.of(crs, algorithm);
      }
      case "binary", "bytes", "varbinary":
        return Types.BinaryType.get();
      case "decimal", "numeric":
        return decimal(tokens, t, what);
      case "fixed": {
        tokens.expect('(', "after 'fixed'");
        Token lengthToken = tokens.peek();
        int length = tokens.expectInt("a fixed length");
        if (length < 1) {
          throw tokens.error(lengthToken, "fixed length of %s must be at least 1", what);
        }
        tokens.expect(')', "after the fixed length");
        return Types.FixedType.ofLength(length);
      }
      case "list", "array": {
        tokens.expect('<', "after 'list'");
        int elementId = ids.incrementAndGet();
        Type element = type(tokens, ids, "the element of " + what);
        boolean required = notNull(tokens);
        tokens.expect('>', "to close list<...> of " + what);
        return required
            ? Types.ListType.ofRequired(elementId, element)
            : Types.ListType.ofOptional(elementId, element);
      }
      case "map": {
        tokens.expect('<', "after 'map'");
        int keyId = ids.incrementAndGet();
        int valueId = ids.incrementAndGet();
        Type key = type(tokens, ids, "the key of " + what);
        Token afterKey = tokens.peek();
        if (afterKey.isKeyword("not")) {
          notNull(tokens); // map keys are always required; accept the redundant marker
        } else if (afterKey.isKeyword("null")) {
          throw tokens.error(afterKey, "map keys of %s cannot be null", what);
        }
        tokens.expect(',', "between the key and value types of " + what);
        Type value = type(tokens, ids, "the value of " + what);
        boolean required = notNull(tokens);
        tokens.expect('>', "to close map<...> of " + what);
        return required
            ? Types.MapType.ofRequired(keyId, valueId, key, value)
            : Types.MapType.ofOptional(keyId, valueId, key, value);
      }
      case "struct": {
        tokens.expect('<', "after 'struct'");
        List<Types.NestedField> fields = new ArrayList<>();
        Set<String> names = new HashSet<>();
        String parent = what.startsWith("column '") ? what.substring(8, what.length() - 1) : null;
        do {
          Token nameToken = tokens.expectWord("a field name in " + what);
          String name = nameToken.text();
          if (!names.add(name.toLowerCase(Locale.ROOT))) {
            throw tokens.error(nameToken, "duplicate field '%s' in %s", name, what);
          }
          tokens.accept(':');
          String fieldWhat = parent != null
              ? "column '" + parent + "." + name + "'"
              : "field '" + name + "' of " + what;
          fields.add(field(tokens, ids, name, fieldWhat));
        } while (tokens.accept(','));
        tokens.expect('>', "to close struct<...> of " + what);
        return Types.StructType.of(fields);
      }
      default:
        throw tokens.error(t, "unknown type '%s' for %s", t.text(), what);
    }
  }

  private static Type decimal(SpecTokenizer tokens, Token at, String what) {
    tokens.expect('(', "after 'decimal' (decimal(precision, scale))");
    Token precisionToken = tokens.peek();
    int precision = tokens.expectInt("a decimal precision");
    tokens.expect(',', "between decimal precision and scale");
    Token scaleToken = tokens.peek();
    int scale = tokens.expectInt("a decimal scale");
    tokens.expect(')', "after the decimal scale");
    if (precision < 1 || precision > 38) {
      throw tokens.error(precisionToken, "decimal precision %d of %s must be between 1 and 38", precision, what);
    }
    if (scale > precision) {
      throw tokens.error(scaleToken, "decimal scale %d of %s must not exceed its precision %d", scale, what, precision);
    }
    return Types.DecimalType.of(precision, scale);
  }

  // ---- partition and sort terms ----

  /** {@code transform} is identity, year, month, day, hour, bucket or truncate. */
  private record TransformTerm(String transform, String column, int argument, String text) {
    Term toTerm() {
      return switch (transform) {
        case "identity" -> Expressions.ref(column);
        case "year" -> Expressions.year(column);
        case "month" -> Expressions.month(column);
        case "day" -> Expressions.day(column);
        case "hour" -> Expressions.hour(column);
        case "bucket" -> Expressions.bucket(column, argument);
        case "truncate" -> Expressions.truncate(column, argument);
        default -> throw new IllegalStateException("unhandled transform " + transform);
      };
    }
  }

  private static TransformTerm transformTerm(SpecTokenizer tokens, Schema schema) {
    Token first = tokens.peek();
    if (first.kind() != SpecTokenizer.Kind.WORD) {
      throw tokens.error(first, "expected a column or transform, found %s", first.describe());
    }
    if (!tokens.peek(1).isSymbol('(') || first.quoted()) {
      String column = tokens.columnReference("a column name");
      requireColumn(tokens, schema, column, first);
      return new TransformTerm("identity", column, 0, "'" + column + "'");
    }
    tokens.take();
    String transform = canonicalTransform(tokens, first);
    tokens.expect('(', "after '" + first.text() + "'");
    String column;
    Token columnToken;
    int argument = 0;
    if (transform.equals("bucket") || transform.equals("truncate")) {
      // Both the SQL order bucket(16, id) and the Iceberg API order bucket(id, 16) are accepted.
      if (tokens.peek().kind() == SpecTokenizer.Kind.NUMBER) {
        Token n = tokens.peek();
        argument = positive(tokens, n, transform);
        tokens.expect(',', "after the " + transform + " width");
        columnToken = tokens.peek();
        column = tokens.columnReference("a column name");
      } else {
        columnToken = tokens.peek();
        column = tokens.columnReference("a column name");
        tokens.expect(',', "after the column of " + transform);
        argument = positive(tokens, tokens.peek(), transform);
      }
    } else {
      columnToken = tokens.peek();
      column = tokens.columnReference("a column name");
    }
    tokens.expect(')', "to close " + first.text() + "(...)");
    requireColumn(tokens, schema, column, columnToken);
    String text = argument > 0
        ? "'" + transform + "(" + argument + ", " + column + ")'"
        : "'" + transform + "(" + column + ")'";
    // Checked here rather than left to the builders, which only notice at build() and cannot
    // say where the offending term is.
    Type sourceType = schema.findType(column);
    String icebergName = argument > 0 ? transform + "[" + argument + "]" : transform;
    if (!Transforms.fromString(icebergName).canTransform(sourceType)) {
      throw tokens.error(first, "%s cannot be applied to column '%s' of type %s", text, column, sourceType);
    }
    return new TransformTerm(transform, column, argument, text);
  }

  private static String canonicalTransform(SpecTokenizer tokens, Token name) {
    return switch (name.lower()) {
      case "identity" -> "identity";
      case "year", "years" -> "year";
      case "month", "months" -> "month";
      case "day", "days", "date" -> "day";
      case "hour", "hours", "date_hour" -> "hour";
      case "bucket" -> "bucket";
      case "truncate", "trunc" -> "truncate";
      default -> throw tokens.error(name,
          "unknown transform '%s' (expected identity, year, month, day, hour, bucket or truncate)",
          name.text());
    };
  }

  private static int positive(SpecTokenizer tokens, Token at, String transform) {
    int n = tokens.expectInt("the " + transform + " width (a number)");
    if (n < 1) {
      throw tokens.error(at, "%s width must be at least 1", transform);
    }
    return n;
  }

  private static void requireColumn(SpecTokenizer tokens, Schema schema, String column, Token at) {
    if (schema.findField(column) == null) {
      throw tokens.error(at, "unknown column '%s'", column);
    }
  }

  private static void expectSeparator(SpecTokenizer tokens, TransformTerm term) {
    if (!tokens.atEnd() && !tokens.peek().isSymbol(',')) {
      throw tokens.error(tokens.peek(), "unexpected %s after %s (expected ',' or end of text)",
          tokens.peek().describe(), term.text());
    }
  }
}
