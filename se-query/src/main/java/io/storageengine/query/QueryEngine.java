package io.storageengine.query;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.query.StatementAnalyzer.Analysis;
import io.storageengine.query.StatementAnalyzer.Comparison;
import io.storageengine.query.StatementAnalyzer.Span;
import io.storageengine.query.StatementAnalyzer.TableName;
import io.storageengine.query.TableSnapshotPlanner.PlannedFile;
import io.storageengine.query.TableSnapshotPlanner.PlannedTable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.StringJoiner;
import java.util.UUID;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.expressions.Binder;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;

/**
 * Plans SQL over a tenant's Iceberg tables: parses it with DuckDB, checks the AST, resolves and
 * pins every referenced table, and sets up a fresh DuckDB database in which each table is a view
 * over its Parquet files (read by Iceberg field id, deleted positions removed). The database is
 * locked (no file access outside the planned files, no settings, no extensions) before the user
 * statement runs in it.
 */
final class QueryEngine {
  private static final String META_SCHEMA = "__se_meta";
  private static final String INFO_SCHEMA = "__se_information_schema";

  private final TenantCatalogs catalogs;
  private final QueryConfig config;
  private final DataFileCache cache;
  private final TableSnapshotPlanner planner;

  QueryEngine(TenantCatalogs catalogs, QueryConfig config) {
    this.catalogs = catalogs;
    this.config = config;
    this.cache = new DataFileCache(config.localDirectory().resolve("data-files"), config.cacheMaxBytes());
    this.planner = new TableSnapshotPlanner(cache);
  }

  /**
   * Plans {@code sql} for the tenant {@code catalogId}. Tables found in {@code pins} are read at
   * that state, others at their current snapshot.
   */
  PreparedQuery prepare(String catalogId, String sql, Map<String, SnapshotPin> pins) {
    List<String> statements = SqlText.statements(sql);
    if (statements.isEmpty()) {
      throw SeException.invalid("SQL is empty");
    }
    if (statements.size() > 1) {
      throw SeException.invalid("multiple statements are not allowed (found %d): send one query per call", statements.size());
    }
    String statement = SqlText.rewrite(statements.get(0));
    Catalog catalog = catalogs.catalog(catalogId);
    Connection connection = open();
    List<DataFileCache.Lease> leases = new ArrayList<>();
    Path spill = config.localDirectory().resolve("spill").resolve(UUID.randomUUID().toString());
    try {
      Analysis analysis = StatementAnalyzer.analyze(parse(connection, statement));
      execute(connection, "ATTACH ':memory:' AS \"default\"");
      execute(connection, "USE \"default\"");
      execute(connection, "CREATE SCHEMA " + META_SCHEMA);
      List<String> files = new ArrayList<>();
      Map<String, SnapshotPin> used = new LinkedHashMap<>();
      int viewNumber = 0;
      for (Map.Entry<String, TableName> entry : analysis.tables().entrySet()) {
        TableName name = entry.getValue();
        TableIdentifier id = TableIdentifier.of(TenantMetadata.namespace(name.schema()), name.table());
        Table table = load(catalog, id);
        SnapshotPin pin = pins.getOrDefault(entry.getKey(), SnapshotPin.current(table));
        used.put(entry.getKey(), pin);
        Schema schema = table.schemas().get(pin.schemaId());
        if (analysis.kind() == StatementAnalyzer.Kind.DESCRIBE_TABLE && schema != null) {
          // Answered from the catalog: no files are planned or read.
          statement = describe(connection, schema, schema.identifierFieldIds());
          continue;
        }
        Expression filter = schema == null ? Expressions.alwaysTrue()
            : filter(schema, analysis.filters().getOrDefault(entry.getKey(), List.of()));
        PlannedTable planned = planner.plan(TenantMetadata.displayName(id), table, pin, filter, leases);
        planned.files().forEach(file -> files.add(file.localPath()));
        createView(connection, name, planned, viewNumber++);
      }
      if (analysis.kind() == StatementAnalyzer.Kind.SHOW_TABLES) {
        statement = showTables(connection, catalog);
      }
      if (!analysis.informationSchema().isEmpty()) {
        statement = informationSchema(connection, catalog, statement, analysis.informationSchema());
      }
      lock(connection, files, spill);
      return new PreparedQuery(connection, statement, used, leases, spill);
    } catch (RuntimeException | SQLException e) {
      new PreparedQuery(connection, statement, Map.of(), leases, spill).close();
      throw DuckDbErrors.translate(e);
    }
  }

  private Connection open() {
    Properties properties = new Properties();
    properties.setProperty("autoload_known_extensions", "false");
    properties.setProperty("autoinstall_known_extensions", "false");
    properties.setProperty("allow_community_extensions", "false");
    properties.setProperty("jdbc_stream_results", "true");
    try {
      return DriverManager.getConnection("jdbc:duckdb:", properties);
    } catch (SQLException e) {
      throw SeException.internal("cannot start the query engine", e);
    }
  }

  private static JsonNode parse(Connection connection, String statement) throws SQLException {
    String json;
    try (PreparedStatement ps = connection.prepareStatement("SELECT json_serialize_sql(?)")) {
      ps.setString(1, statement);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        json = rs.getString(1);
      }
    }
    JsonNode tree = Json.parse(json.getBytes(StandardCharsets.UTF_8));
    if (tree.path("error").asBoolean(false)) {
      String type = tree.path("error_type").asText();
      if ("not implemented".equals(type)) {
        throw StatementAnalyzer.refusedStatement(statement);
      }
      throw SeException.invalid("SQL %s error: %s", type, tree.path("error_message").asText());
    }
    JsonNode parsed = tree.path("statements");
    if (parsed.size() != 1) {
      throw SeException.invalid("multiple statements are not allowed (found %d): send one query per call", parsed.size());
    }
    return parsed.get(0);
  }

  private static Table load(Catalog catalog, TableIdentifier id) {
    try {
      return catalog.loadTable(id);
    } catch (NoSuchTableException | NoSuchNamespaceException e) {
      throw SeException.notFound("table %s does not exist", TenantMetadata.displayName(id));
    }
  }

  /** Iceberg pruning filter from simple comparisons; anything that does not bind is skipped. */
  static Expression filter(Schema schema, List<Comparison> comparisons) {
    Expression result = Expressions.alwaysTrue();
    for (Comparison comparison : comparisons) {
      Types.NestedField field = schema.caseInsensitiveFindField(comparison.column());
      if (field == null || schema.findField(field.fieldId()) == null || !schema.columns().contains(field)) {
        continue;
      }
      Object value = literal(field, comparison);
      if (value == null) {
        continue;
      }
      Expression expression;
      switch (comparison.operator()) {
        case "COMPARE_EQUAL": expression = Expressions.equal(field.name(), value); break;
        case "COMPARE_LESSTHAN": expression = Expressions.lessThan(field.name(), value); break;
        case "COMPARE_LESSTHANOREQUALTO": expression = Expressions.lessThanOrEqual(field.name(), value); break;
        case "COMPARE_GREATERTHAN": expression = Expressions.greaterThan(field.name(), value); break;
        case "COMPARE_GREATERTHANOREQUALTO": expression = Expressions.greaterThanOrEqual(field.name(), value); break;
        default: continue;
      }
      try {
        Binder.bind(schema.asStruct(), expression, true);
        result = Expressions.and(result, expression);
      } catch (RuntimeException e) {
        // Not prunable (type mismatch); DuckDB still applies the predicate.
      }
    }
    return result;
  }

  /** Only types whose comparison semantics match DuckDB's exactly are pushed down. */
  private static Object literal(Types.NestedField field, Comparison comparison) {
    String kind = comparison.literalKind();
    String text = comparison.literalText();
    try {
      switch (field.type().typeId()) {
        case INTEGER:
          return "INTEGER".equals(kind) ? Integer.valueOf(text) : null;
        case LONG:
          return "INTEGER".equals(kind) ? Long.valueOf(text) : null;
        case STRING:
        case DATE:
          return "STRING".equals(kind) ? text : null;
        default:
          return null;
      }
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private void createView(Connection connection, TableName name, PlannedTable table, int number) throws SQLException {
    Schema schema = table.schema();
    String schemaName = SqlText.quote(name.schema());
    execute(connection, "CREATE SCHEMA IF NOT EXISTS " + schemaName);
    StringJoiner columns = new StringJoiner(", ");
    StringJoiner fieldMap = new StringJoiner(", ", "MAP {", "}");
    for (Types.NestedField field : schema.columns()) {
      String type = IcebergTypes.duckdbType(field.name(), field.type());
      columns.add(SqlText.quote(field.name()));
      fieldMap.add(field.fieldId() + ": {name: " + SqlText.literal(field.name()) + ", type: "
          + SqlText.literal(type) + ", default_value: " + IcebergTypes.defaultLiteral(field) + "}");
    }
    List<PlannedFile> clean = new ArrayList<>();
    List<PlannedFile> withDeletes = new ArrayList<>();
    for (PlannedFile file : table.files()) {
      (file.deletedPositions().length == 0 ? clean : withDeletes).add(file);
    }
    List<String> parts = new ArrayList<>();
    if (!clean.isEmpty()) {
      parts.add("SELECT " + columns + " FROM read_parquet(" + fileList(clean) + ", schema = " + fieldMap + ")");
    }
    if (!withDeletes.isEmpty()) {
      String deletes = META_SCHEMA + ".deletes_" + number;
      execute(connection, "CREATE TABLE " + deletes + " (file VARCHAR, pos BIGINT)");
      try (DuckDBAppender appender = ((DuckDBConnection) connection).createAppender(META_SCHEMA, "deletes_" + number)) {
        for (PlannedFile file : withDeletes) {
          for (long position : file.deletedPositions()) {
            appender.beginRow().append(file.localPath()).append(position).endRow();
          }
        }
      }
      parts.add("SELECT " + columns + " FROM read_parquet(" + fileList(withDeletes) + ", schema = " + fieldMap
          + ", filename = '__se_file', file_row_number = true) AS data WHERE NOT EXISTS (SELECT 1 FROM "
          + deletes + " AS d WHERE d.file = data.__se_file AND d.pos = data.file_row_number)");
    }
    if (parts.isEmpty()) {
      StringJoiner empty = new StringJoiner(", ");
      for (Types.NestedField field : schema.columns()) {
        empty.add("CAST(NULL AS " + IcebergTypes.duckdbType(field.name(), field.type()) + ") AS " + SqlText.quote(field.name()));
      }
      parts.add("SELECT " + empty + " WHERE false");
    }
    execute(connection, "CREATE VIEW " + schemaName + "." + SqlText.quote(name.table()) + " AS " + String.join(" UNION ALL ", parts));
  }

  private static String fileList(List<PlannedFile> files) {
    StringJoiner list = new StringJoiner(", ", "[", "]");
    files.forEach(file -> list.add(SqlText.literal(file.localPath())));
    return list.toString();
  }

  private static String describe(Connection connection, Schema schema, Set<Integer> identifierFields) throws SQLException {
    String table = META_SCHEMA + ".describe";
    execute(connection, "CREATE TABLE " + table + " (column_name VARCHAR, column_type VARCHAR, \"null\" VARCHAR, "
        + "\"key\" VARCHAR, \"default\" VARCHAR, extra VARCHAR, position INTEGER)");
    try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + table + " VALUES (?, ?, ?, ?, NULL, NULL, ?)")) {
      int position = 0;
      for (Types.NestedField field : schema.columns()) {
        insert.setString(1, field.name());
        insert.setString(2, IcebergTypes.duckdbType(field.name(), field.type()));
        insert.setString(3, field.isOptional() ? "YES" : "NO");
        insert.setString(4, identifierFields.contains(field.fieldId()) ? "PRI" : null);
        insert.setInt(5, position++);
        insert.executeUpdate();
      }
    }
    return "SELECT column_name, column_type, \"null\", \"key\", \"default\", extra FROM " + table + " ORDER BY position";
  }

  private static String showTables(Connection connection, Catalog catalog) throws SQLException {
    String table = META_SCHEMA + ".show_tables";
    execute(connection, "CREATE TABLE " + table + " (database VARCHAR, schema VARCHAR, name VARCHAR)");
    try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + table + " VALUES ('default', ?, ?)")) {
      for (TableIdentifier id : TenantMetadata.tables(catalog, TenantMetadata.namespaces(catalog))) {
        insert.setString(1, TenantMetadata.schemaName(id.namespace()));
        insert.setString(2, id.name());
        insert.executeUpdate();
      }
    }
    return "SELECT database, schema, name FROM " + table + " ORDER BY schema, name";
  }

  /** Materializes the referenced information_schema views from the catalog and points the SQL at them. */
  private static String informationSchema(Connection connection, Catalog catalog, String statement, List<Span> spans)
      throws SQLException {
    execute(connection, "CREATE SCHEMA " + INFO_SCHEMA);
    List<Namespace> namespaces = TenantMetadata.namespaces(catalog);
    Set<String> views = new java.util.HashSet<>();
    spans.forEach(span -> views.add(span.view()));
    if (views.contains("schemata")) {
      execute(connection, "CREATE TABLE " + INFO_SCHEMA + ".schemata (catalog_name VARCHAR, schema_name VARCHAR)");
      try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + INFO_SCHEMA + ".schemata VALUES ('default', ?)")) {
        for (Namespace namespace : namespaces) {
          insert.setString(1, TenantMetadata.schemaName(namespace));
          insert.executeUpdate();
        }
      }
    }
    List<TableIdentifier> tables = views.contains("tables") || views.contains("columns")
        ? TenantMetadata.tables(catalog, namespaces) : List.of();
    if (views.contains("tables")) {
      execute(connection, "CREATE TABLE " + INFO_SCHEMA + ".tables (table_catalog VARCHAR, table_schema VARCHAR, "
          + "table_name VARCHAR, table_type VARCHAR)");
      try (PreparedStatement insert = connection.prepareStatement(
          "INSERT INTO " + INFO_SCHEMA + ".tables VALUES ('default', ?, ?, 'BASE TABLE')")) {
        for (TableIdentifier id : tables) {
          insert.setString(1, TenantMetadata.schemaName(id.namespace()));
          insert.setString(2, id.name());
          insert.executeUpdate();
        }
      }
    }
    if (views.contains("columns")) {
      execute(connection, "CREATE TABLE " + INFO_SCHEMA + ".columns (table_catalog VARCHAR, table_schema VARCHAR, "
          + "table_name VARCHAR, column_name VARCHAR, ordinal_position INTEGER, is_nullable VARCHAR, data_type VARCHAR)");
      try (PreparedStatement insert = connection.prepareStatement(
          "INSERT INTO " + INFO_SCHEMA + ".columns VALUES ('default', ?, ?, ?, ?, ?, ?)")) {
        for (TableIdentifier id : tables) {
          Schema schema;
          try {
            schema = catalog.loadTable(id).schema();
          } catch (NoSuchTableException e) {
            continue; // dropped while listing
          }
          int position = 1;
          for (Types.NestedField field : schema.columns()) {
            insert.setString(1, TenantMetadata.schemaName(id.namespace()));
            insert.setString(2, id.name());
            insert.setString(3, field.name());
            insert.setInt(4, position++);
            insert.setString(5, field.isOptional() ? "YES" : "NO");
            insert.setString(6, typeName(field));
            insert.executeUpdate();
          }
        }
      }
    }
    // Splice from the end so earlier offsets stay valid; DuckDB reports byte offsets.
    byte[] bytes = statement.getBytes(StandardCharsets.UTF_8);
    List<Span> sorted = new ArrayList<>(spans);
    sorted.sort((a, b) -> Integer.compare(b.start(), a.start()));
    String result = statement;
    for (Span span : sorted) {
      if (span.start() + span.length() > bytes.length) {
        throw SeException.invalid("information_schema.%s cannot be used here", span.view());
      }
      String before = new String(bytes, 0, span.start(), StandardCharsets.UTF_8);
      String after = new String(bytes, span.start() + span.length(), bytes.length - span.start() - span.length(),
          StandardCharsets.UTF_8);
      String replaced = before + INFO_SCHEMA + "." + span.view() + after;
      bytes = replaced.getBytes(StandardCharsets.UTF_8);
      result = replaced;
    }
    return result;
  }

  private static String typeName(Types.NestedField field) {
    try {
      return IcebergTypes.duckdbType(field.name(), field.type());
    } catch (SeException e) {
      return field.type().toString();
    }
  }

  private void lock(Connection connection, List<String> files, Path spill) throws SQLException {
    StringJoiner allowed = new StringJoiner(", ", "[", "]");
    files.forEach(file -> allowed.add(SqlText.literal(file)));
    execute(connection, "SET allowed_paths = " + allowed);
    execute(connection, "SET allowed_directories = [" + SqlText.literal(spill.toString() + "/") + "]");
    execute(connection, "SET temp_directory = " + SqlText.literal(spill.toString()));
    execute(connection, "SET memory_limit = " + SqlText.literal(config.duckdbMemoryLimit()));
    execute(connection, "SET threads = " + config.duckdbThreads());
    execute(connection, "SET TimeZone = 'UTC'");
    execute(connection, "SET autoload_known_extensions = false");
    execute(connection, "SET autoinstall_known_extensions = false");
    execute(connection, "SET enable_external_access = false");
    execute(connection, "SET lock_configuration = true");
  }

  private static void execute(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }
}
