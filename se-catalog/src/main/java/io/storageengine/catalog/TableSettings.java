package io.storageengine.catalog;

import io.storageengine.common.SeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The engine's reading of one table's {@code se.*} properties and of the schema parts they name,
 * with one rule per key. Ingestion, reconciliation, compaction, {@code se table describe} and the
 * commands read a table through {@link #of(Table)} only, so a table means the same thing to all
 * of them; a value one of them would refuse is refused by all of them, with the same
 * INVALID_ARGUMENT message.
 *
 * <p>The rules:
 *
 * <ul>
 *   <li>{@code se.mode}: absent means {@code append}; otherwise {@code append} or {@code entity},
 *       case-insensitive, surrounding whitespace ignored. Anything else (blank included) is
 *       refused: {@code table x: se.mode 'foo' is not append or entity}.
 *   <li>primary key (entity tables): the schema's identifier fields, in the order the schema
 *       lists them in {@link Schema#identifierFieldIds()}; at least one, each a top-level
 *       column.
 *   <li>{@code se.version-column} (entity tables): absent or blank means none (the newest
 *       arrival wins); otherwise the exact name of a top-level column that is not part of the
 *       key and is numeric (int, bigint, float, double, decimal), date or timestamp.
 *   <li>{@code se.tombstone-retention} (entity tables): absent or blank means the process
 *       default; otherwise a whole number of milliseconds or an ISO-8601 duration such as
 *       {@code P7D}, not negative.
 *   <li>{@code se.slice.count} (entity tables): absent or blank means the table is not sliced;
 *       otherwise a whole number from 1 to {@value TableSlices#MAX_SLICES}.
 *   <li>{@code se.slice.target-rows} (sliced entity tables): absent or blank means
 *       {@value #DEFAULT_SLICE_TARGET_ROWS}; otherwise a positive whole number
 *       ({@link #sliceTargetRows}).
 *   <li>{@code se.variant.shredding.<column>}: {@code auto}, {@code off} or typed fields
 *       ({@link VariantShredding}).
 * </ul>
 *
 * <p>On an append table the entity-only keys have no meaning and are not read.
 *
 * @param table the table's name, for messages
 * @param mode how writes are applied
 * @param primaryKey entity tables: the key columns; empty for append tables
 * @param versionColumn entity tables: the version column, if any; empty for append tables
 * @param tombstoneRetention entity tables: the table's own retention, if set
 * @param sliceCount entity tables: the number of hash slices, 0 when the table is not sliced
 * @param variantShredding the variant columns whose shredding is not left to DuckDB, by column
 *     name ({@link VariantShredding#of(String, Schema, Map)}); empty when there are none
 */
public record TableSettings(
    String table,
    TableDefinition.Mode mode,
    List<Types.NestedField> primaryKey,
    Optional<Types.NestedField> versionColumn,
    Optional<Duration> tombstoneRetention,
    int sliceCount,
    Map<String, VariantShredding> variantShredding) {

  public TableSettings {
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(mode, "mode");
    primaryKey = List.copyOf(primaryKey);
    Objects.requireNonNull(versionColumn, "versionColumn");
    Objects.requireNonNull(tombstoneRetention, "tombstoneRetention");
    variantShredding = Map.copyOf(variantShredding);
  }

  /** The settings of {@code table}, read from its current schema and properties. */
  public static TableSettings of(Table table) {
    return of(table.name(), table.schema(), table.properties());
  }

  /**
   * The settings of a table named {@code table} (used in messages) with {@code schema} and
   * {@code properties}. INVALID_ARGUMENT naming the table and the key when a rule is broken.
   */
  public static TableSettings of(String table, Schema schema, Map<String, String> properties) {
    TableDefinition.Mode mode = parseMode(table, properties.get(TableProperties.MODE));
    // Read here so that a value reconciliation would refuse is refused by every part.
    Map<String, VariantShredding> shredding = VariantShredding.of(table, schema, properties);
    if (mode == TableDefinition.Mode.APPEND) {
      return new TableSettings(table, mode, List.of(), Optional.empty(), Optional.empty(), 0,
          shredding);
    }
    List<Types.NestedField> key = new ArrayList<>();
    for (Integer id : schema.identifierFieldIds()) {
      Types.NestedField top = schema.asStruct().field(id);
      if (top == null) {
        throw SeException.invalid("table %s: primary-key field '%s' must be a top-level column", table,
            schema.findColumnName(id));
      }
      key.add(top);
    }
    if (key.isEmpty()) {
      throw SeException.invalid("table %s: an entity table needs a primary key (the schema's identifier fields), "
          + "and this one has none", table);
    }
    Optional<Types.NestedField> version = versionColumn(table, schema, key,
        properties.get(TableProperties.VERSION_COLUMN));
    Optional<Duration> retention = parseRetention(table, properties.get(TableProperties.TOMBSTONE_RETENTION));
    int slices = parseSliceCount(table, properties.get(TableProperties.SLICE_COUNT));
    return new TableSettings(table, mode, key, version, retention, slices, shredding);
  }

  /**
   * {@code se.slice.count} as the rule above reads it: 0 when absent or blank; INVALID_ARGUMENT
   * when it is not a whole number from 1 to {@value TableSlices#MAX_SLICES}.
   */
  public static int parseSliceCount(String table, String value) {
    if (value == null || value.isBlank()) {
      return 0;
    }
    int count;
    try {
      count = Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      count = -1;
    }
    if (count < 1 || count > TableSlices.MAX_SLICES) {
      throw SeException.invalid("table %s: %s '%s' is not a whole number from 1 to %d", table,
          TableProperties.SLICE_COUNT, value, TableSlices.MAX_SLICES);
    }
    return count;
  }

  /**
   * {@code se.mode} as the rule above reads it: absent is append; INVALID_ARGUMENT for anything
   * other than append or entity.
   */
  public static TableDefinition.Mode parseMode(String table, String value) {
    if (value == null) {
      return TableDefinition.Mode.APPEND;
    }
    String text = value.trim().toLowerCase(Locale.ROOT);
    for (TableDefinition.Mode m : TableDefinition.Mode.values()) {
      if (m.propertyValue().equals(text)) {
        return m;
      }
    }
    throw SeException.invalid("table %s: %s '%s' is not append or entity", table, TableProperties.MODE, value);
  }

  /**
   * {@code se.tombstone-retention} as the rule above reads it: empty when absent or blank;
   * INVALID_ARGUMENT when it is neither milliseconds nor an ISO-8601 duration, or negative.
   */
  public static Optional<Duration> parseRetention(String table, String value) {
    return parseRetention(table, TableProperties.TOMBSTONE_RETENTION, value);
  }

  /** Default of {@code se.producer-retention}. */
  public static final Duration DEFAULT_PRODUCER_RETENTION = Duration.ofDays(7);

  /**
   * The table's {@code se.producer-retention} (read as {@code se.tombstone-retention} is), or
   * {@link #DEFAULT_PRODUCER_RETENTION}; INVALID_ARGUMENT when it cannot be read.
   */
  /** The rows a slice aims at when {@code se.slice.target-rows} is not set. */
  public static final long DEFAULT_SLICE_TARGET_ROWS = 4_000_000L;

  /**
   * {@code se.slice.target-rows} of {@code table} as the rule above reads it; INVALID_ARGUMENT
   * when it is not a positive whole number.
   */
  public static long sliceTargetRows(Table table) {
    return parseSliceTargetRows(table.name(), table.properties().get(TableProperties.SLICE_TARGET_ROWS));
  }

  /** {@code se.slice.target-rows} given as {@code value} (null: absent). */
  public static long parseSliceTargetRows(String table, String value) {
    if (value == null || value.isBlank()) {
      return DEFAULT_SLICE_TARGET_ROWS;
    }
    long rows;
    try {
      rows = Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      rows = -1;
    }
    if (rows < 1) {
      throw SeException.invalid("table %s: %s '%s' is not a positive whole number", table,
          TableProperties.SLICE_TARGET_ROWS, value);
    }
    return rows;
  }

  public static Duration producerRetention(Table table) {
    return parseRetention(table.name(), TableProperties.PRODUCER_RETENTION,
        table.properties().get(TableProperties.PRODUCER_RETENTION))
        .orElse(DEFAULT_PRODUCER_RETENTION);
  }

  private static Optional<Duration> parseRetention(String table, String property, String value) {
    if (value == null || value.isBlank()) {
      return Optional.empty();
    }
    String text = value.trim();
    Duration retention;
    try {
      retention = text.chars().allMatch(Character::isDigit) ? Duration.ofMillis(Long.parseLong(text))
          : Duration.parse(text);
    } catch (RuntimeException e) {
      throw SeException.invalid("table %s: %s '%s' is neither an ISO-8601 duration (e.g. P7D) nor a number of "
          + "milliseconds", table, property, value);
    }
    if (retention.isNegative()) {
      throw SeException.invalid("table %s: %s '%s' is negative", table, property, value);
    }
    return Optional.of(retention);
  }

  private static Optional<Types.NestedField> versionColumn(String table, Schema schema,
      List<Types.NestedField> key, String name) {
    if (name == null || name.isBlank()) {
      return Optional.empty();
    }
    Types.NestedField column = schema.asStruct().field(name);
    if (column == null) {
      throw SeException.invalid("table %s: %s '%s' is not a top-level column of the table", table,
          TableProperties.VERSION_COLUMN, name);
    }
    if (key.stream().anyMatch(k -> k.fieldId() == column.fieldId())) {
      throw SeException.invalid("table %s: %s '%s' is part of the primary key", table,
          TableProperties.VERSION_COLUMN, name);
    }
    if (!isVersionType(column.type())) {
      throw SeException.invalid("table %s: %s '%s' has type %s; it must be numeric (int, bigint, float, double, "
          + "decimal), date or timestamp", table, TableProperties.VERSION_COLUMN, name, column.type());
    }
    return Optional.of(column);
  }

  /** The types a version column may have. */
  static boolean isVersionType(Type type) {
    return switch (type.typeId()) {
      case INTEGER, LONG, FLOAT, DOUBLE, DECIMAL, DATE, TIMESTAMP, TIMESTAMP_NANO -> true;
      default -> false;
    };
  }

  public boolean entity() {
    return mode == TableDefinition.Mode.ENTITY;
  }

  /** The key column names, in key order. */
  public List<String> primaryKeyNames() {
    return primaryKey.stream().map(Types.NestedField::name).toList();
  }

  public Optional<String> versionColumnName() {
    return versionColumn.map(Types.NestedField::name);
  }

  /** True when the table's key space is divided into slices ({@code se.slice.count}). */
  public boolean sliced() {
    return sliceCount > 0;
  }

  /** The table's tombstone retention, else {@code defaultRetention}. */
  public Duration tombstoneRetention(Duration defaultRetention) {
    return tombstoneRetention.orElse(defaultRetention);
  }
}
