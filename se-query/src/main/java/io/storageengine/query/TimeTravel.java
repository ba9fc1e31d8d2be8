package io.storageengine.query;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.common.SeException;
import io.storageengine.query.SqlText.Kind;
import io.storageengine.query.SqlText.Token;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * Time travel on a table reference: which snapshot a query reads instead of the current one.
 *
 * <p>Two spellings are accepted. DuckDB's {@code t AT (VERSION => v)} and
 * {@code t AT (TIMESTAMP => ts)} are parsed by DuckDB; the Trino/Spark spelling
 * {@code t FOR VERSION AS OF v} / {@code t FOR TIMESTAMP AS OF ts} (also {@code SYSTEM_VERSION},
 * {@code SYSTEM_TIME}) is turned into DuckDB's by {@link #rewrite} before parsing, moving an alias
 * that follows it in front of the {@code AT} as DuckDB's grammar wants ({@code DESCRIBE t FOR ...}
 * becomes {@code DESCRIBE SELECT * FROM t AT ...}). The value must be a
 * literal: a snapshot id (integer), a branch or tag name (string), or a timestamp (string,
 * optionally typed {@code TIMESTAMP '...'}); anything else is INVALID_ARGUMENT.
 *
 * <p>A {@link Spec} resolves ({@link #pin}) to the snapshot Iceberg's rules give, read with the
 * schema Iceberg's rules give ({@code SnapshotUtil.schemaFor}): a snapshot id, a tag or a
 * timestamp read with the schema the snapshot was written with; a branch with the table's current
 * schema. A timestamp picks the snapshot that was current then (the table's snapshot log, as
 * Iceberg's {@code SnapshotUtil.snapshotIdAsOfTime}); a timestamp without zone or offset is UTC. A missing snapshot, ref or
 * timestamp is NOT_FOUND naming the table and what was asked.
 */
final class TimeTravel {
  /** Words of the Trino/Spark spelling: {@code FOR <unit> AS OF}. */
  private static final Set<String> VERSION_UNITS = Set.of("VERSION", "SYSTEM_VERSION");
  private static final Set<String> TIME_UNITS = Set.of("TIMESTAMP", "SYSTEM_TIME");
  /** Type words a typed timestamp literal may start with. */
  private static final Set<String> TIMESTAMP_TYPES = Set.of("TIMESTAMP", "TIMESTAMPTZ", "DATE");
  /** Words after a table reference that are not an alias. */
  private static final Set<String> NOT_ALIAS = Set.of("JOIN", "LEFT", "RIGHT", "INNER", "FULL", "OUTER", "CROSS",
      "NATURAL", "POSITIONAL", "ASOF", "ANTI", "SEMI", "LATERAL", "ON", "USING", "WHERE", "GROUP", "ORDER", "LIMIT",
      "OFFSET", "UNION", "EXCEPT", "INTERSECT", "HAVING", "WINDOW", "QUALIFY", "TABLESAMPLE", "FOR", "FETCH",
      "RETURNING", "PIVOT", "UNPIVOT", "AT");

  private TimeTravel() {}

  /** How a reference names its snapshot. */
  enum Unit { VERSION, TIMESTAMP }

  /**
   * A time travel clause: {@code unit}, and its value as written ({@code number}: an integer
   * literal, otherwise the text of a string literal).
   */
  record Spec(Unit unit, String value, boolean number) {
    /** Identifies the clause among the references of one statement (part of the table's key). */
    String key() {
      return unit + (number ? "#" : "'") + value;
    }

    /** The clause as a user would write it, for error messages. */
    String written() {
      return unit == Unit.VERSION ? "VERSION AS OF " + (number ? value : "'" + value + "'")
          : "TIMESTAMP AS OF '" + value + "'";
    }
  }

  /**
   * The clause DuckDB parsed ({@code at_clause} of a table reference, non-null) of the reference
   * written {@code table}: INVALID_ARGUMENT unless its value is a literal.
   */
  static Spec spec(JsonNode at, String table) {
    String unitName = at.path("unit").asText().toUpperCase(Locale.ROOT);
    Unit unit;
    if (unitName.equals("VERSION")) {
      unit = Unit.VERSION;
    } else if (unitName.equals("TIMESTAMP")) {
      unit = Unit.TIMESTAMP;
    } else {
      throw SeException.invalid("table `%s`: time travel by %s is not supported (use VERSION or TIMESTAMP)", table,
          at.path("unit").asText());
    }
    JsonNode expr = at.path("expr");
    if (unit == Unit.TIMESTAMP && "CAST".equals(expr.path("class").asText())
        && !expr.path("try_cast").asBoolean(false)
        && TIMESTAMP_TYPES.contains(expr.path("type_expr").path("type_name").asText().toUpperCase(Locale.ROOT))
        && expr.path("type_expr").path("children").size() == 0) {
      expr = expr.path("child");
    }
    if ("CONSTANT".equals(expr.path("class").asText())) {
      String kind = expr.path("literal").path("kind").asText();
      String text = expr.path("literal").path("text").asText();
      if (kind.equals("STRING")) {
        return new Spec(unit, text, false);
      }
      if (unit == Unit.VERSION && (kind.equals("INTEGER") || kind.equals("BIGINT") || kind.equals("HUGEINT"))
          && text.matches("[0-9]{1,19}")) {
        return new Spec(unit, text, true);
      }
    }
    throw SeException.invalid("table `%s`: the time travel value must be a literal: a snapshot id, a 'branch' or "
        + "'tag' name (VERSION), or a 'timestamp' (TIMESTAMP)", table);
  }

  /**
   * The snapshot and schema {@code spec} reads of {@code table} (shown as {@code displayName}).
   * NOT_FOUND for a snapshot, ref or time the table does not have; INVALID_ARGUMENT for a value
   * that is not a snapshot id or a timestamp.
   */
  static SnapshotPin pin(Table table, String displayName, Spec spec) {
    if (spec.unit() == Unit.TIMESTAMP) {
      long millis = epochMillis(spec.value(), displayName);
      Snapshot found;
      try {
        found = table.snapshot(SnapshotUtil.snapshotIdAsOfTime(table, millis));
      } catch (IllegalArgumentException e) {
        found = null;
      }
      if (found == null) {
        throw SeException.notFound("table %s has no snapshot committed at or before %s (%s)", displayName,
            spec.value(), Instant.ofEpochMilli(millis));
      }
      return snapshotPin(table, found);
    }
    if (spec.number()) {
      Snapshot snapshot;
      try {
        snapshot = table.snapshot(Long.parseLong(spec.value()));
      } catch (NumberFormatException e) {
        throw SeException.invalid("table %s: snapshot id %s is out of range", displayName, spec.value());
      }
      if (snapshot == null) {
        throw SeException.notFound("table %s has no snapshot %s", displayName, spec.value());
      }
      return snapshotPin(table, snapshot);
    }
    SnapshotRef ref = table.refs().get(spec.value());
    if (ref == null) {
      throw SeException.notFound("table %s has no branch or tag `%s` (refs: %s)", displayName, spec.value(),
          String.join(", ", new TreeSet<>(table.refs().keySet())));
    }
    Snapshot snapshot = table.snapshot(ref.snapshotId());
    if (snapshot == null) {
      throw SeException.notFound("table %s: the snapshot of %s `%s` no longer exists", displayName,
          ref.isBranch() ? "branch" : "tag", spec.value());
    }
    return ref.isBranch() ? new SnapshotPin(snapshot.snapshotId(), table.schema().schemaId()) : snapshotPin(table, snapshot);
  }

  /** {@code snapshot} read with the schema it was written with (the table's for a snapshot that does not say). */
  private static SnapshotPin snapshotPin(Table table, Snapshot snapshot) {
    Integer schemaId = snapshot.schemaId();
    Schema schema = schemaId == null ? null : table.schemas().get(schemaId);
    return new SnapshotPin(snapshot.snapshotId(), schema == null ? table.schema().schemaId() : schema.schemaId());
  }

  private static final DateTimeFormatter LOCAL = new DateTimeFormatterBuilder()
      .append(DateTimeFormatter.ISO_LOCAL_DATE)
      .optionalStart().appendLiteral(' ').optionalEnd()
      .optionalStart().appendLiteral('T').optionalEnd()
      .optionalStart().appendValue(ChronoField.HOUR_OF_DAY, 2).appendLiteral(':')
      .appendValue(ChronoField.MINUTE_OF_HOUR, 2)
      .optionalStart().appendLiteral(':').appendValue(ChronoField.SECOND_OF_MINUTE, 2).optionalEnd()
      .optionalStart().appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true).optionalEnd()
      .optionalEnd()
      .toFormatter(Locale.ROOT);

  /**
   * Milliseconds since the epoch of a timestamp written {@code 2024-05-01}, {@code 2024-05-01 12:00:00[.fff]}
   * (or with {@code T}), optionally followed by an offset ({@code Z}, {@code +02:00}, {@code +02})
   * or a zone ({@code UTC}, {@code Europe/Vienna}); UTC when neither is given.
   */
  static long epochMillis(String text, String displayName) {
    String value = text.trim();
    try {
      int zoneStart = zoneStart(value);
      String local = value.substring(0, zoneStart).trim();
      String zone = value.substring(zoneStart).trim();
      LocalDateTime time = local.length() <= 10 ? LocalDate.parse(local).atStartOfDay()
          : LocalDateTime.parse(local, LOCAL);
      ZoneId id;
      if (zone.isEmpty()) {
        id = ZoneOffset.UTC;
      } else if (zone.startsWith("+") || zone.startsWith("-")) {
        id = ZoneOffset.of(zone.length() == 3 ? zone + ":00" : zone);
      } else if (zone.equals("Z")) {
        id = ZoneOffset.UTC;
      } else {
        id = ZoneId.of(zone);
      }
      return ZonedDateTime.of(time, id).toInstant().toEpochMilli();
    } catch (DateTimeException | IndexOutOfBoundsException e) {
      try {
        return OffsetDateTime.parse(value).toInstant().toEpochMilli();
      } catch (DateTimeException ignored) {
        throw SeException.invalid("table %s: `%s` is not a timestamp (write e.g. '2024-05-01 12:00:00', "
            + "'2024-05-01T12:00:00+02:00' or '2024-05-01 12:00:00 UTC')", displayName, text);
      }
    }
  }

  /** Where the zone or offset of a timestamp starts (its length when there is none). */
  private static int zoneStart(String value) {
    // After the date (10 characters): the first letter other than the T separator, or a sign.
    for (int i = 10; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '+' || c == '-' || c == 'Z' || (Character.isLetter(c) && !(c == 'T' && i == 10))) {
        return i;
      }
    }
    return value.length();
  }

  /**
   * {@code statement} with each Trino/Spark clause {@code FOR VERSION|SYSTEM_VERSION|TIMESTAMP|SYSTEM_TIME
   * AS OF <literal>} after a table name written as DuckDB's {@code AT (VERSION|TIMESTAMP => <literal>)},
   * placed after the reference's alias (and column aliases) when one follows. Everything else is
   * kept as written; a clause whose value is not a literal is INVALID_ARGUMENT.
   */
  static String rewrite(String statement) {
    List<Token> tokens = SqlText.tokens(statement);
    StringBuilder out = null;
    int copied = 0;
    for (int i = 0; i + 4 < tokens.size(); i++) {
      if (!tokens.get(i).isWord("FOR") || !tokens.get(i + 2).isWord("AS") || !tokens.get(i + 3).isWord("OF")) {
        continue;
      }
      String unitWord = tokens.get(i + 1).kind() == Kind.WORD ? tokens.get(i + 1).text().toUpperCase(Locale.ROOT) : "";
      Unit unit = VERSION_UNITS.contains(unitWord) ? Unit.VERSION : TIME_UNITS.contains(unitWord) ? Unit.TIMESTAMP : null;
      if (unit == null) {
        continue;
      }
      int valueStart = i + 4;
      int valueEnd = valueStart; // inclusive
      Token value = tokens.get(valueStart);
      if (value.kind() == Kind.WORD && TIMESTAMP_TYPES.contains(value.text().toUpperCase(Locale.ROOT))
          && valueStart + 1 < tokens.size() && tokens.get(valueStart + 1).kind() == Kind.STRING) {
        valueEnd = valueStart + 1;
      } else if (value.kind() != Kind.STRING && value.kind() != Kind.NUMBER) {
        throw SeException.invalid("FOR %s AS OF: the time travel value must be a literal: a snapshot id, a 'branch' "
            + "or 'tag' name (VERSION), or a 'timestamp' (TIMESTAMP)", unitWord);
      }
      // An alias after the clause: [AS] name [(column, ...)].
      int aliasStart = valueEnd + 1;
      int aliasEnd = aliasStart; // exclusive token index
      if (aliasEnd < tokens.size() && tokens.get(aliasEnd).isWord("AS")) {
        aliasEnd++;
      }
      boolean named = aliasEnd < tokens.size() && (tokens.get(aliasEnd).kind() == Kind.QUOTED_IDENTIFIER
          || (tokens.get(aliasEnd).kind() == Kind.WORD
              && !NOT_ALIAS.contains(tokens.get(aliasEnd).text().toUpperCase(Locale.ROOT))));
      if (named) {
        aliasEnd++;
        if (aliasEnd < tokens.size() && tokens.get(aliasEnd).text().equals("(")) {
          int depth = 0;
          for (; aliasEnd < tokens.size(); aliasEnd++) {
            String text = tokens.get(aliasEnd).text();
            if (tokens.get(aliasEnd).kind() == Kind.SYMBOL && text.equals("(")) {
              depth++;
            } else if (tokens.get(aliasEnd).kind() == Kind.SYMBOL && text.equals(")") && --depth == 0) {
              aliasEnd++;
              break;
            }
          }
        }
      } else {
        aliasEnd = aliasStart;
      }
      if (out == null) {
        out = new StringBuilder(statement.length() + 16);
      }
      String valueText = statement.substring(value.start(), tokens.get(valueEnd).end());
      int end = tokens.get(valueEnd).end();
      out.append(statement, copied, tokens.get(i).start());
      if (aliasEnd > aliasStart) {
        out.append(statement, tokens.get(aliasStart).start(), tokens.get(aliasEnd - 1).end()).append(' ');
        end = tokens.get(aliasEnd - 1).end();
      }
      out.append("AT (").append(unit).append(" => ").append(valueText).append(')');
      copied = end;
      i = Math.max(valueEnd, aliasEnd - 1);
    }
    if (out == null) {
      return statement;
    }
    out.append(statement, copied, statement.length());
    if (tokens.get(0).isWord("DESCRIBE") && !tokens.get(1).isWord("SELECT")) {
      // DuckDB's DESCRIBE <table> takes no AT clause; DESCRIBE of the table's query does.
      out.replace(tokens.get(0).start(), tokens.get(0).end(), "DESCRIBE SELECT * FROM");
    }
    return out.toString();
  }
}
