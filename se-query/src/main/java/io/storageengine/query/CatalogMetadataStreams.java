package io.storageengine.query;

import io.storageengine.common.SeException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.flight.sql.FlightSqlProducer.Schemas;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.types.Types;

/** Answers the Flight SQL metadata calls from a tenant's Iceberg catalog. */
final class CatalogMetadataStreams {
  static final String TABLE_TYPE = "TABLE";

  private final BufferAllocator allocator;

  CatalogMetadataStreams(BufferAllocator allocator) {
    this.allocator = allocator;
  }

  void catalogs(ServerStreamListener listener) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {StatementAnalyzer.CATALOG});
    send(Schemas.GET_CATALOGS_SCHEMA, rows, listener);
  }

  void tableTypes(ServerStreamListener listener) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {TABLE_TYPE});
    send(Schemas.GET_TABLE_TYPES_SCHEMA, rows, listener);
  }

  void schemas(Catalog catalog, String catalogFilter, String schemaPattern, ServerStreamListener listener) {
    List<String[]> rows = new ArrayList<>();
    if (catalogMatches(catalogFilter)) {
      for (Namespace namespace : TenantMetadata.namespaces(catalog)) {
        String name = TenantMetadata.schemaName(namespace);
        if (TenantMetadata.matchesPattern(name, schemaPattern)) {
          rows.add(new String[] {StatementAnalyzer.CATALOG, name});
        }
      }
    }
    send(Schemas.GET_SCHEMAS_SCHEMA, rows, listener);
  }

  void tables(Catalog catalog, FlightSql.CommandGetTables command, ServerStreamListener listener) {
    boolean includeSchema = command.getIncludeSchema();
    Schema resultSchema = includeSchema ? Schemas.GET_TABLES_SCHEMA : Schemas.GET_TABLES_SCHEMA_NO_SCHEMA;
    List<String[]> rows = new ArrayList<>();
    List<byte[]> schemas = new ArrayList<>();
    boolean typeMatches = command.getTableTypesCount() == 0 || command.getTableTypesList().stream()
        .anyMatch(type -> type.equalsIgnoreCase(TABLE_TYPE));
    if (typeMatches && catalogMatches(command.hasCatalog() ? command.getCatalog() : null)) {
      String schemaPattern = command.hasDbSchemaFilterPattern() ? command.getDbSchemaFilterPattern() : null;
      String tablePattern = command.hasTableNameFilterPattern() ? command.getTableNameFilterPattern() : null;
      List<Namespace> namespaces = TenantMetadata.namespaces(catalog).stream()
          .filter(ns -> TenantMetadata.matchesPattern(TenantMetadata.schemaName(ns), schemaPattern)).toList();
      for (TableIdentifier id : TenantMetadata.tables(catalog, namespaces)) {
        if (!TenantMetadata.matchesPattern(id.name(), tablePattern)) {
          continue;
        }
        if (includeSchema) {
          Table table;
          try {
            table = catalog.loadTable(id);
          } catch (NoSuchTableException e) {
            continue; // dropped while listing
          }
          schemas.add(arrowSchema(table.schema()).serializeAsMessage());
        }
        rows.add(new String[] {StatementAnalyzer.CATALOG, TenantMetadata.schemaName(id.namespace()), id.name(), TABLE_TYPE});
      }
    }
    try (VectorSchemaRoot root = VectorSchemaRoot.create(resultSchema, allocator)) {
      fill(root, rows);
      if (includeSchema) {
        VarBinaryVector vector = (VarBinaryVector) root.getVector("table_schema");
        for (int i = 0; i < schemas.size(); i++) {
          vector.setSafe(i, schemas.get(i));
        }
        vector.setValueCount(rows.size());
      }
      listener.start(root);
      listener.putNext();
      listener.completed();
    }
  }

  void primaryKeys(Catalog catalog, FlightSql.CommandGetPrimaryKeys command, ServerStreamListener listener) {
    List<String[]> rows = new ArrayList<>();
    List<Integer> sequence = new ArrayList<>();
    if (catalogMatches(command.hasCatalog() ? command.getCatalog() : null)) {
      if (!command.hasDbSchema()) {
        throw SeException.invalid("GetPrimaryKeys needs the table's namespace (db_schema)");
      }
      TableIdentifier id = TableIdentifier.of(TenantMetadata.namespace(command.getDbSchema()), command.getTable());
      Table table;
      try {
        table = catalog.loadTable(id);
      } catch (NoSuchTableException e) {
        throw SeException.notFound("table %s does not exist", TenantMetadata.displayName(id));
      }
      Set<Integer> keys = table.schema().identifierFieldIds();
      int position = 1;
      for (Types.NestedField field : table.schema().columns()) {
        if (keys.contains(field.fieldId())) {
          rows.add(new String[] {StatementAnalyzer.CATALOG, command.getDbSchema(), id.name(), field.name(), null});
          sequence.add(position++);
        }
      }
    }
    try (VectorSchemaRoot root = VectorSchemaRoot.create(Schemas.GET_PRIMARY_KEYS_SCHEMA, allocator)) {
      String[] names = {"catalog_name", "db_schema_name", "table_name", "column_name", "key_name"};
      for (int c = 0; c < names.length; c++) {
        VarCharVector vector = (VarCharVector) root.getVector(names[c]);
        for (int r = 0; r < rows.size(); r++) {
          setString(vector, r, rows.get(r)[c]);
        }
        vector.setValueCount(rows.size());
      }
      IntVector keySequence = (IntVector) root.getVector("key_sequence");
      for (int r = 0; r < rows.size(); r++) {
        keySequence.setSafe(r, sequence.get(r));
      }
      keySequence.setValueCount(rows.size());
      root.setRowCount(rows.size());
      listener.start(root);
      listener.putNext();
      listener.completed();
    }
  }

  /** The Arrow schema a {@code SELECT *} of a table with this Iceberg schema returns. */
  static Schema arrowSchema(org.apache.iceberg.Schema schema) {
    List<Field> fields = new ArrayList<>();
    for (Types.NestedField field : schema.columns()) {
      fields.add(IcebergTypes.arrowField(field.name(), field.type()));
    }
    return new Schema(fields);
  }

  private static boolean catalogMatches(String catalogFilter) {
    return catalogFilter == null || catalogFilter.equals(StatementAnalyzer.CATALOG);
  }

  private void send(Schema schema, List<String[]> rows, ServerStreamListener listener) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
      fill(root, rows);
      listener.start(root);
      listener.putNext();
      listener.completed();
    }
  }

  /** Fills the leading string columns of {@code root} with {@code rows}. */
  private static void fill(VectorSchemaRoot root, List<String[]> rows) {
    int columns = rows.isEmpty() ? 0 : rows.get(0).length;
    for (int c = 0; c < columns; c++) {
      VarCharVector vector = (VarCharVector) root.getVector(c);
      for (int r = 0; r < rows.size(); r++) {
        setString(vector, r, rows.get(r)[c]);
      }
      vector.setValueCount(rows.size());
    }
    root.setRowCount(rows.size());
  }

  private static void setString(VarCharVector vector, int row, String value) {
    if (value == null) {
      vector.setNull(row);
    } else {
      vector.setSafe(row, value.getBytes(StandardCharsets.UTF_8));
    }
  }
}
