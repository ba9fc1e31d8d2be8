package io.storageengine.query;

import io.storageengine.common.SeException;
import io.storageengine.duckdb.DuckLiterals;
import io.storageengine.duckdb.QueryDatabasePool;
import io.storageengine.query.StatementAnalyzer.Span;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.types.Types;

/**
 * Emulates the metadata statements from the tenant's Iceberg catalog, since DuckDB's own would
 * describe the query's views (or nothing): {@code DESCRIBE <table>} (and {@code SHOW COLUMNS},
 * which {@link SqlText#rewrite} turns into it), {@code SHOW TABLES}, and the
 * {@code information_schema} views {@code schemata}, {@code tables} and {@code columns}
 * ({@link StatementAnalyzer#INFORMATION_SCHEMA_VIEWS}).
 *
 * <p>Each method fills tables on the query's connection (in {@link QueryDatabasePool#META_SCHEMA}
 * or {@link #INFO_SCHEMA}, part of the query's catalog and dropped with it) and returns the
 * statement to run instead. The answers name the catalog {@code default}, schemas as
 * {@link TenantMetadata#schemaName} writes namespaces, and DuckDB types as
 * {@link IcebergTypes#duckdbType} maps them, so they match what queries of the views see. No data
 * file is read.
 */
final class MetadataStatements {
  /** The schema the emulated information_schema views are materialized in. */
  static final String INFO_SCHEMA = "__se_information_schema";
  private static final String META_SCHEMA = QueryDatabasePool.META_SCHEMA;

  private MetadataStatements() {}

  /**
   * The statement answering {@code DESCRIBE} of a table with {@code schema}: one row per
   * top-level column, in order, with DuckDB's DESCRIBE columns ({@code column_name},
   * {@code column_type}, {@code null} YES/NO, {@code key} PRI for identifier fields,
   * {@code default} the column's write default, {@code extra}).
   */
  static String describe(Connection connection, Schema schema) throws SQLException {
    Set<Integer> identifierFields = schema.identifierFieldIds();
    String table = META_SCHEMA + ".describe";
    execute(connection, "CREATE TABLE " + table + " (column_name VARCHAR, column_type VARCHAR, \"null\" VARCHAR, "
        + "\"key\" VARCHAR, \"default\" VARCHAR, extra VARCHAR, position INTEGER)");
    int position = 0;
    for (Types.NestedField field : schema.columns()) {
      // The write default as DuckDB prints a value of the column's type.
      String writeDefault = field.writeDefault() == null ? null : DuckLiterals.of(field.type(), field.writeDefault());
      try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + table + " VALUES (?, ?, ?, ?, "
          + (writeDefault == null ? "NULL" : "CAST(" + writeDefault + " AS VARCHAR)") + ", NULL, ?)")) {
        insert.setString(1, field.name());
        insert.setString(2, IcebergTypes.displayName(IcebergTypes.duckdbType(field.name(), field.type())));
        insert.setString(3, field.isOptional() ? "YES" : "NO");
        insert.setString(4, identifierFields.contains(field.fieldId()) ? "PRI" : null);
        insert.setInt(5, position++);
        insert.executeUpdate();
      }
    }
    return "SELECT column_name, column_type, \"null\", \"key\", \"default\", extra FROM " + table + " ORDER BY position";
  }

  /** The statement answering {@code SHOW TABLES}: every table of the catalog, by schema and name. */
  static String showTables(Connection connection, Catalog catalog) throws SQLException {
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

  /**
   * {@code statement} reading the emulated information_schema views instead of DuckDB's: the
   * views {@code spans} name are materialized from the catalog (only those) and each span is
   * replaced by the name of its copy (see {@link StatementSplice}). A table dropped while the
   * columns are listed is left out. Columns of a type DuckDB has no name for show Iceberg's.
   */
  static String informationSchema(Connection connection, Catalog catalog, String statement, List<Span> spans)
      throws SQLException {
    materializeInformationSchema(connection, catalog, spans);
    return StatementSplice.replace(statement, spans, MetadataStatements::informationSchemaCopy);
  }

  /** The name of the copy of the information_schema view {@code span} references. */
  static String informationSchemaCopy(Span span) {
    return INFO_SCHEMA + "." + span.view();
  }

  /**
   * Materializes the information_schema views {@code spans} name, as {@link #informationSchema}
   * does, leaving the statement to the caller (which replaces the spans with
   * {@link #informationSchemaCopy}).
   */
  static void materializeInformationSchema(Connection connection, Catalog catalog, List<Span> spans)
      throws SQLException {
    execute(connection, "CREATE SCHEMA " + INFO_SCHEMA);
    List<Namespace> namespaces = TenantMetadata.namespaces(catalog);
    Set<String> views = new HashSet<>();
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
  }

  private static String typeName(Types.NestedField field) {
    try {
      return IcebergTypes.duckdbType(field.name(), field.type());
    } catch (SeException e) {
      return field.type().toString();
    }
  }

  private static void execute(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }
}
