package io.storageengine.catalog;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/** Creating engine tables in a tenant catalog, and describing them. */
public final class Tables {
  /** Every table the engine creates is v3: entity tables need deletion vectors and row lineage. */
  public static final int FORMAT_VERSION = 3;

  private Tables() {}

  /**
   * Creates {@code identifier} as {@code definition} says, creating missing (nested) namespaces
   * first. The table is format v3 with {@code se.mode} (and {@code se.version-column}) set; an
   * entity table's primary key becomes the schema's identifier fields.
   *
   * <p>Refused with INVALID_ARGUMENT: an entity table without a primary key; a key column that is
   * missing, nested, not primitive, floating point or not declared {@code not null}; a primary
   * key or version column on an append table; a version column that is missing, nested, part of
   * the key or not numeric, date or timestamp. ALREADY_EXISTS when the table exists.
   */
  public static Table create(Catalog catalog, TableIdentifier identifier, TableDefinition definition) {
    Schema schema = withIdentifierFields(definition);
    Map<String, String> properties = new LinkedHashMap<>(definition.properties());
    properties.put("format-version", Integer.toString(FORMAT_VERSION));
    properties.put(TableProperties.MODE, definition.mode().propertyValue());
    definition.versionColumn().ifPresent(v -> properties.put(TableProperties.VERSION_COLUMN, v));

    createNamespaces(catalog, identifier.namespace());
    try {
      return catalog.buildTable(identifier, schema)
          .withPartitionSpec(definition.partitionSpec())
          .withSortOrder(definition.sortOrder())
          .withProperties(properties)
          .create();
    } catch (AlreadyExistsException e) {
      throw new SeException(ErrorCode.ALREADY_EXISTS, "table '" + identifier + "' already exists");
    } catch (NoSuchNamespaceException e) {
      // Only when the namespace was dropped between our check and the create.
      throw SeException.notFound("namespace '%s' of table '%s' not found", identifier.namespace(), identifier);
    }
  }

  /**
   * Parses the {@code --table} text of the commands: {@code a.b.t} is table {@code t} in
   * namespace {@code a.b}. INVALID_ARGUMENT without a namespace or with an empty part.
   */
  public static TableIdentifier parseIdentifier(String text) {
    String[] parts = text == null ? new String[0] : text.split("\\.", -1);
    if (parts.length < 2 || java.util.Arrays.stream(parts).anyMatch(String::isBlank)) {
      throw SeException.invalid("--table: expected namespace.table (e.g. analytics.events.page_views), got '%s'", text);
    }
    return TableIdentifier.of(Namespace.of(java.util.Arrays.copyOf(parts, parts.length - 1)), parts[parts.length - 1]);
  }

  /**
   * Mode, key, version column, layout and WAL position of {@code table}, as {@link TableSettings}
   * reads them (INVALID_ARGUMENT when a setting breaks its rule, as everywhere else).
   */
  public static TableDescription describe(Table table) {
    TableSettings settings = TableSettings.of(table);
    Schema schema = table.schema();
    Snapshot current = table.currentSnapshot();
    return new TableDescription(
        table.name(),
        table.uuid() == null ? null : table.uuid().toString(),
        table.location(),
        TableUtil.formatVersion(table),
        settings.mode(),
        settings.primaryKeyNames(),
        settings.versionColumnName(),
        schema,
        table.spec(),
        table.sortOrder(),
        Optional.ofNullable(current).map(Snapshot::snapshotId),
        walSeq(table, current));
  }

  /** Walks back from {@code snapshot}: maintenance commits (compaction) may not carry the key. */
  private static Optional<Long> walSeq(Table table, Snapshot snapshot) {
    Set<Long> seen = new HashSet<>();
    for (Snapshot s = snapshot; s != null && seen.add(s.snapshotId());
        s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      String value = s.summary() == null ? null : s.summary().get(TableProperties.SUMMARY_WAL_SEQ);
      if (value != null) {
        try {
          return Optional.of(Long.parseLong(value.trim()));
        } catch (NumberFormatException e) {
          return Optional.empty();
        }
      }
    }
    return Optional.empty();
  }

  private static Schema withIdentifierFields(TableDefinition definition) {
    Schema schema = definition.schema();
    List<String> key = definition.primaryKey();
    boolean entity = definition.mode() == TableDefinition.Mode.ENTITY;
    if (!entity && !key.isEmpty()) {
      throw SeException.invalid("primary key %s: only entity tables have a primary key (use mode entity)", key);
    }
    if (!entity && definition.versionColumn().isPresent()) {
      throw SeException.invalid("version column '%s': only entity tables have a version column (use mode entity)",
          definition.versionColumn().get());
    }
    if (entity && key.isEmpty()) {
      throw SeException.invalid("entity table needs a primary key (one or more not null columns)");
    }
    Set<Integer> ids = new HashSet<>();
    for (String name : key) {
      Types.NestedField column = topLevel(schema, name, "primary key column");
      Type type = column.type();
      if (!type.isPrimitiveType()) {
        throw SeException.invalid("primary key column '%s' must be of a primitive type, not %s", name, type);
      }
      if (type.typeId() == Type.TypeID.FLOAT || type.typeId() == Type.TypeID.DOUBLE) {
        throw SeException.invalid("primary key column '%s' must not be float or double", name);
      }
      if (column.isOptional()) {
        throw SeException.invalid("primary key column '%s' must be declared not null", name);
      }
      if (!ids.add(column.fieldId())) {
        throw SeException.invalid("primary key column '%s' is listed twice", name);
      }
    }
    if (definition.versionColumn().isPresent()) {
      String name = definition.versionColumn().get();
      Types.NestedField column = topLevel(schema, name, "version column");
      if (ids.contains(column.fieldId())) {
        throw SeException.invalid("version column '%s' must not be part of the primary key", name);
      }
      if (!TableSettings.isVersionType(column.type())) {
        throw SeException.invalid(
            "version column '%s' must be numeric (int, bigint, float, double, decimal), date or timestamp, not %s",
            name, column.type());
      }
    }
    return ids.isEmpty() ? schema : new Schema(schema.columns(), schema.getAliases(), ids);
  }

  private static Types.NestedField topLevel(Schema schema, String name, String what) {
    Types.NestedField column = schema.asStruct().field(name);
    if (column == null) {
      if (schema.findField(name) != null) {
        throw SeException.invalid("%s '%s' must be a top-level column", what, name);
      }
      throw SeException.invalid("%s '%s' does not exist in the schema", what, name);
    }
    return column;
  }

  private static void createNamespaces(Catalog catalog, Namespace namespace) {
    if (namespace.isEmpty() || !(catalog instanceof SupportsNamespaces namespaces)) {
      return;
    }
    String[] levels = namespace.levels();
    for (int depth = 1; depth <= levels.length; depth++) {
      Namespace ns = Namespace.of(java.util.Arrays.copyOf(levels, depth));
      if (!namespaces.namespaceExists(ns)) {
        try {
          namespaces.createNamespace(ns);
        } catch (RuntimeException e) {
          // Created concurrently by someone else is just what we wanted. Not every catalog says
          // so with AlreadyExistsException: JdbcCatalog reports the race as a constraint
          // violation (UncheckedSQLException), so look again before giving up.
          if (!(e instanceof AlreadyExistsException) && !namespaces.namespaceExists(ns)) {
            throw e;
          }
        }
      }
    }
  }
}
