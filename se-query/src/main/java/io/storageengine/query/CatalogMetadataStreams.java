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
          schemas.add(tableSchema(TenantMetadata.schemaName(id.namespace()), id.name(), table.schema())
              .serializeAsMessage());
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

  /** One row of {@code GetXdbcTypeInfo}: a type a column or literal may have. */
  private record TypeInfo(String name, int xdbcType, Integer columnSize, String literalPrefix, String literalSuffix,
      List<String> createParams, boolean caseSensitive, int searchable, Boolean unsigned, boolean fixedPrecScale,
      Integer minimumScale, Integer maximumScale, Integer datetimeSubcode, Integer radix) {}

  /** The types of the dialect, ordered by XDBC type number then name, as JDBC's getTypeInfo is. */
  private static final List<TypeInfo> TYPES = java.util.stream.Stream.of(
      new TypeInfo("BOOLEAN", -7, 1, null, null, null, false, 2, null, false, null, null, null, null),
      new TypeInfo("TINYINT", -6, 3, null, null, null, false, 2, false, false, 0, 0, null, 10),
      new TypeInfo("BIGINT", -5, 19, null, null, null, false, 2, false, false, 0, 0, null, 10),
      new TypeInfo("BLOB", -3, null, "'", "'::BLOB", null, false, 2, null, false, null, null, null, null),
      new TypeInfo("DECIMAL", 3, 38, null, null, List.of("precision", "scale"), false, 2, false, false, 0, 38, null, 10),
      new TypeInfo("INTEGER", 4, 10, null, null, null, false, 2, false, false, 0, 0, null, 10),
      new TypeInfo("SMALLINT", 5, 5, null, null, null, false, 2, false, false, 0, 0, null, 10),
      new TypeInfo("FLOAT", 7, 24, null, null, null, false, 2, false, false, null, null, null, 2),
      new TypeInfo("DOUBLE", 8, 53, null, null, null, false, 2, false, false, null, null, null, 2),
      new TypeInfo("UUID", 1, 36, "'", "'::UUID", null, false, 2, null, false, null, null, null, null),
      new TypeInfo("VARCHAR", 12, null, "'", "'", null, true, 3, null, false, null, null, null, null),
      new TypeInfo("DATE", 91, 10, "DATE '", "'", null, false, 2, null, false, null, null, 1, null),
      new TypeInfo("TIME", 92, 15, "TIME '", "'", null, false, 2, null, false, 0, 6, 2, null),
      new TypeInfo("TIMESTAMP", 93, 26, "TIMESTAMP '", "'", null, false, 2, null, false, 0, 6, 3, null),
      new TypeInfo("TIMESTAMP WITH TIME ZONE", 93, 32, "TIMESTAMPTZ '", "'", null, false, 2, null, false, 0, 6, 3, null))
      .sorted(java.util.Comparator.comparingInt(TypeInfo::xdbcType).thenComparing(TypeInfo::name)).toList();

  /** {@code GetXdbcTypeInfo}: every type, or those of the requested XDBC type number. */
  void typeInfo(FlightSql.CommandGetXdbcTypeInfo command, ServerStreamListener listener) {
    List<TypeInfo> rows = TYPES.stream()
        .filter(type -> !command.hasDataType() || type.xdbcType() == command.getDataType()).toList();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(Schemas.GET_TYPE_INFO_SCHEMA, allocator)) {
      root.allocateNew();
      org.apache.arrow.vector.complex.ListVector params =
          (org.apache.arrow.vector.complex.ListVector) root.getVector("create_params");
      org.apache.arrow.vector.complex.impl.UnionListWriter paramsWriter = params.getWriter();
      for (int r = 0; r < rows.size(); r++) {
        TypeInfo type = rows.get(r);
        setString((VarCharVector) root.getVector("type_name"), r, type.name());
        setInt(root, "data_type", r, type.xdbcType());
        setInt(root, "column_size", r, type.columnSize());
        setString((VarCharVector) root.getVector("literal_prefix"), r, type.literalPrefix());
        setString((VarCharVector) root.getVector("literal_suffix"), r, type.literalSuffix());
        if (type.createParams() != null) {
          paramsWriter.setPosition(r);
          paramsWriter.startList();
          for (String param : type.createParams()) {
            byte[] bytes = param.getBytes(StandardCharsets.UTF_8);
            try (org.apache.arrow.memory.ArrowBuf buffer = allocator.buffer(bytes.length)) {
              buffer.setBytes(0, bytes);
              paramsWriter.varChar().writeVarChar(0, bytes.length, buffer);
            }
          }
          paramsWriter.endList();
        } else {
          params.setNull(r);
        }
        setInt(root, "nullable", r, FlightSql.Nullable.NULLABILITY_NULLABLE_VALUE);
        setBit(root, "case_sensitive", r, type.caseSensitive());
        setInt(root, "searchable", r, type.searchable());
        setBit(root, "unsigned_attribute", r, type.unsigned());
        setBit(root, "fixed_prec_scale", r, type.fixedPrecScale());
        setBit(root, "auto_increment", r, false);
        setString((VarCharVector) root.getVector("local_type_name"), r, type.name());
        setInt(root, "minimum_scale", r, type.minimumScale());
        setInt(root, "maximum_scale", r, type.maximumScale());
        setInt(root, "sql_data_type", r, type.xdbcType());
        setInt(root, "datetime_subcode", r, type.datetimeSubcode());
        setInt(root, "num_prec_radix", r, type.radix());
        setInt(root, "interval_precision", r, null);
      }
      params.setValueCount(rows.size());
      root.setRowCount(rows.size());
      listener.start(root);
      listener.putNext();
      listener.completed();
    }
  }

  /**
   * {@code GetExportedKeys}, {@code GetImportedKeys}, {@code GetCrossReference}: Iceberg tables
   * have no foreign keys, so the answer is always empty ({@code schema} is the call's).
   */
  void noForeignKeys(Schema schema, ServerStreamListener listener) {
    send(schema, List.of(), listener);
  }

  private static void setInt(VectorSchemaRoot root, String column, int row, Integer value) {
    IntVector vector = (IntVector) root.getVector(column);
    if (value == null) {
      vector.setNull(row);
    } else {
      vector.setSafe(row, value);
    }
  }

  private static void setBit(VectorSchemaRoot root, String column, int row, Boolean value) {
    org.apache.arrow.vector.BitVector vector = (org.apache.arrow.vector.BitVector) root.getVector(column);
    if (value == null) {
      vector.setNull(row);
    } else {
      vector.setSafe(row, value ? 1 : 0);
    }
  }

  /**
   * The Arrow schema of a table as {@code GetTables} reports it: required columns not nullable,
   * {@code fixed(n)} as {@code FixedSizeBinary(n)}, each field with its Flight SQL column metadata
   * (see {@link IcebergTypes#tableColumn}).
   */
  static Schema tableSchema(String namespace, String table, org.apache.iceberg.Schema schema) {
    List<Field> fields = new ArrayList<>();
    for (Types.NestedField field : schema.columns()) {
      fields.add(IcebergTypes.tableColumn(namespace, table, field));
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
