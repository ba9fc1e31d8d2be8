package io.storageengine.query;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.Json;
import io.storageengine.common.LruMap;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DataFileCache;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.duckdb.ParquetFooters;
import io.storageengine.duckdb.QueryDatabasePool;
import io.storageengine.duckdb.SqlQuoting;
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
import java.util.function.Function;
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
 * pins every referenced table, plans its files (reusing the plan of a snapshot planned before),
 * and sets up, on a connection to a locked DuckDB database of the tenant (see
 * {@link QueryDatabasePool}), a view per table over its Parquet files (deleted positions
 * removed). The database reads only
 * below the tenant's data directories, changes no setting and loads no extension; each query
 * gets a fresh in-memory catalog {@code default} for its views, detached when it ends.
 */
final class QueryEngine implements AutoCloseable {
  private static final String META_SCHEMA = QueryDatabasePool.META_SCHEMA;
  private static final String INFO_SCHEMA = "__se_information_schema";
  /** Plans of a query without pins whose current snapshot is expired while it is planned. */
  static final int MAX_PLAN_ATTEMPTS = 3;
  static final int MAX_ANALYSES = 512;
  static final int MAX_ANALYZED_LENGTH = 16_384;

  private final TenantCatalogs catalogs;
  private final SnapshotPlanCache plans = new SnapshotPlanCache();
  private final TableSnapshotPlanner planner;
  private final QueryDatabasePool pool;
  private final ParquetFooters footers;
  private final DuckDBConnection parser;
  private final TableStateCache tables = new TableStateCache();
  private final Map<String, Analyzed> analyses = new LruMap<>(MAX_ANALYSES);

  /** A statement's analysis and its select list (see {@link ResultColumns#select}). */
  private record Analyzed(Analysis analysis, ResultColumns.Select select) {}

  /**
   * @param duckdb the process's DuckDB runtime: the engine's databases, data file copies and
   *     footers are its (closing the engine leaves them to it)
   */
  QueryEngine(TenantCatalogs catalogs, DuckRuntime duckdb, QueryConfig config) {
    this.catalogs = catalogs;
    this.planner = new TableSnapshotPlanner(duckdb, plans);
    this.pool = duckdb.queryDatabases(config.duckdbMemoryLimit(), config.duckdbThreads());
    this.footers = duckdb.footers();
    this.parser = openParser();
  }

  /**
   * Plans {@code sql} for the tenant {@code catalogId}. Tables found in {@code pins} are read at
   * that state, others at their current snapshot. When maintenance expires the current snapshot
   * of a table while it is planned (its files deleted under the planner), a query without pins is
   * planned again on the new current snapshot; a pinned snapshot that is gone fails with
   * {@link SnapshotExpiredException}.
   */
  PreparedQuery prepare(String catalogId, String sql, Map<String, SnapshotPin> pins) {
    return prepare(catalogId, sql, pins, QueryParameters.NONE);
  }

  /**
   * Plans {@code sql} as {@link #prepare(String, String, Map)} does, with {@code parameters}
   * bound to its parameters when it runs (they also prune files where a column is compared with
   * a parameter). The values are not checked here: see {@link PreparedQuery#checkParameters}.
   */
  PreparedQuery prepare(String catalogId, String sql, Map<String, SnapshotPin> pins, QueryParameters parameters) {
    for (int attempt = 1; ; attempt++) {
      try {
        return prepareOnce(catalogId, sql, pins, parameters);
      } catch (SnapshotExpiredException e) {
        if (!pins.isEmpty() || attempt >= MAX_PLAN_ATTEMPTS) {
          throw e;
        }
      }
    }
  }

  private PreparedQuery prepareOnce(String catalogId, String sql, Map<String, SnapshotPin> pins,
      QueryParameters parameters) {
    List<String> statements = SqlText.statements(sql);
    if (statements.isEmpty()) {
      throw SeException.invalid("SQL is empty");
    }
    if (statements.size() > 1) {
      throw SeException.invalid("multiple statements are not allowed (found %d): send one query per call", statements.size());
    }
    String statement = SqlText.rewrite(statements.get(0));
    Catalog catalog = catalogs.catalog(catalogId);
    List<AutoCloseable> resources = new ArrayList<>();
    List<DataFileCache.Lease> leases = new ArrayList<>();
    QueryDatabasePool.Lease database = null;
    List<PreparedQuery.TableRead> reads = new ArrayList<>();
    try {
      Analyzed analyzed = analyze(statement);
      Analysis analysis = analyzed.analysis();
      Map<String, SnapshotPin> used = new LinkedHashMap<>();
      Map<TableName, PlannedTable> planned = new LinkedHashMap<>();
      Schema describe = null;
      for (Map.Entry<String, TableName> entry : analysis.tables().entrySet()) {
        TableName name = entry.getValue();
        TableIdentifier id = TableIdentifier.of(TenantMetadata.namespace(name.namespace()), name.table());
        Table table = load(catalogId, catalog, id, name);
        SnapshotPin pin = pins.getOrDefault(entry.getKey(), SnapshotPin.current(table));
        used.put(entry.getKey(), pin);
        Schema schema = table.schemas().get(pin.schemaId());
        if (analysis.kind() == StatementAnalyzer.Kind.DESCRIBE_TABLE && schema != null) {
          // Answered from the catalog: no files are planned or read.
          describe = schema;
          continue;
        }
        Expression filter = schema == null ? Expressions.alwaysTrue()
            : filter(schema, analysis.filters().getOrDefault(entry.getKey(), List.of()), parameters);
        planned.put(name, planner.plan(catalogId, TenantMetadata.displayName(id), table, pin, filter, leases));
      }
      for (PlannedTable table : planned.values()) {
        if (table.snapshotId() != null) {
          reads.add(new PreparedQuery.TableRead(table.displayName(), table.table(), table.snapshotId(),
              table.files().stream().map(PlannedFile::localPath).toList()));
        }
      }
      database = pool.acquire(catalogId, directories(planned.values()));
      Connection connection = database.connection();
      if (describe != null) {
        statement = describe(connection, describe, describe.identifierFieldIds());
      }
      int viewNumber = 0;
      for (Map.Entry<TableName, PlannedTable> entry : planned.entrySet()) {
        createView(connection, entry.getKey(), entry.getValue(), viewNumber++);
      }
      if (analysis.kind() == StatementAnalyzer.Kind.SHOW_TABLES) {
        statement = showTables(connection, catalog);
      }
      if (!analysis.informationSchema().isEmpty()) {
        statement = informationSchema(connection, catalog, statement, analysis.informationSchema());
      }
      resources.addAll(leases);
      resources.add(database);
      List<ResultColumns.Origin> origins = List.of();
      if (analyzed.select() != null && analysis.kind() == StatementAnalyzer.Kind.QUERY
          && analysis.informationSchema().isEmpty()) {
        PlannedTable read = planned.get(analyzed.select().table());
        origins = ResultColumns.origins(analyzed.select(), read == null ? null : read.schema());
      }
      return new PreparedQuery(connection, statement, used, parameters, reads, resources, origins);
    } catch (RuntimeException | SQLException e) {
      leases.forEach(DataFileCache.Lease::close);
      if (database != null) {
        database.close();
      }
      // A view is bound (its files opened) when it is created: a file gone since planning.
      throw PreparedQuery.translate(reads, e);
    }
  }

  /** The SQL keywords of the dialect (DuckDB's reserved and unreserved keywords), upper case, sorted. */
  List<String> keywords() {
    List<String> keywords = new ArrayList<>();
    try (Connection connection = parser.duplicate();
        Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery("SELECT upper(keyword_name) FROM duckdb_keywords() ORDER BY 1")) {
      while (rows.next()) {
        keywords.add(rows.getString(1));
      }
    } catch (SQLException e) {
      throw SeException.internal("cannot list the SQL keywords", e);
    }
    return List.copyOf(keywords);
  }

  /** Plans cached so far (for tests). */
  SnapshotPlanCache plans() {
    return plans;
  }

  /** The pool of DuckDB databases (for tests). */
  QueryDatabasePool pool() {
    return pool;
  }

  /**
   * The directories the query's files lie in, each ending in {@code /}: the prefixes of the very
   * paths handed to DuckDB, so DuckDB's check sees the same strings.
   */
  private static Set<String> directories(Iterable<PlannedTable> tables) {
    Set<String> directories = new java.util.TreeSet<>();
    for (PlannedTable table : tables) {
      for (PlannedFile file : table.files()) {
        String path = file.localPath();
        int slash = path.lastIndexOf('/');
        directories.add(slash > 0 ? path.substring(0, slash + 1)
            : Path.of(path).toAbsolutePath().getParent().toString() + "/");
      }
    }
    return directories;
  }

  /** A DuckDB database that only parses: no file access, settings locked. */
  private static DuckDBConnection openParser() {
    Properties properties = new Properties();
    properties.setProperty("autoload_known_extensions", "false");
    properties.setProperty("autoinstall_known_extensions", "false");
    properties.setProperty("allow_community_extensions", "false");
    try {
      DuckDBConnection connection = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:", properties);
      execute(connection, "SET threads = 1");
      execute(connection, "SET enable_external_access = false");
      execute(connection, "SET lock_configuration = true");
      return connection;
    } catch (SQLException e) {
      throw SeException.internal("cannot start the query engine", e);
    }
  }

  private JsonNode parse(String statement) throws SQLException {
    // A connection per parse: DuckDB connections are not shared between threads.
    try (Connection connection = parser.duplicate()) {
      return parse(connection, statement);
    }
  }

  /** DuckDB's parse tree of {@code statement} (one statement); parse errors are INVALID_ARGUMENT. */
  static JsonNode parse(Connection connection, String statement) throws SQLException {
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
      throw SeException.invalid("SQL %s error: %s", type, DuckDbErrors.scrub(tree.path("error_message").asText()));
    }
    JsonNode parsed = tree.path("statements");
    if (parsed.size() != 1) {
      throw SeException.invalid("multiple statements are not allowed (found %d): send one query per call", parsed.size());
    }
    return parsed.get(0);
  }

  /** The current state of {@code id} (see {@link TableStateCache}); NOT_FOUND when it does not exist. */
  private Table load(String catalogId, Catalog catalog, TableIdentifier id, TableName name) {
    try {
      return tables.current(catalogId, catalog, id, () -> catalog.loadTable(id));
    } catch (NoSuchTableException | NoSuchNamespaceException e) {
      if (name.unqualified()) {
        throw SeException.notFound("table `%s` does not exist in namespace %s (an unqualified name reads %s; "
            + "write <namespace>.%s for another namespace)", name.table(), name.namespace(),
            TenantMetadata.displayName(id), name.table());
      }
      throw SeException.notFound("table %s does not exist", TenantMetadata.displayName(id));
    }
  }

  /**
   * What {@code statement} references, parsed once per text: the last {@link #MAX_ANALYSES}
   * statements (each at most {@link #MAX_ANALYZED_LENGTH} characters) are remembered. Statements
   * that fail to parse or are refused are not.
   */
  private Analyzed analyze(String statement) throws SQLException {
    synchronized (analyses) {
      Analyzed known = analyses.get(statement);
      if (known != null) {
        return known;
      }
    }
    JsonNode tree = parse(statement);
    Analysis result = StatementAnalyzer.analyze(tree);
    Analyzed analysis = new Analyzed(result, ResultColumns.select(tree, result.tables()));
    if (statement.length() <= MAX_ANALYZED_LENGTH) {
      synchronized (analyses) {
        analyses.put(statement, analysis);
      }
    }
    return analysis;
  }

  /** Iceberg pruning filter from simple comparisons; anything that does not bind is skipped. */
  static Expression filter(Schema schema, List<Comparison> comparisons) {
    return filter(schema, comparisons, QueryParameters.NONE);
  }

  /** As {@link #filter(Schema, List)}, comparisons with a parameter using its bound value. */
  static Expression filter(Schema schema, List<Comparison> comparisons, QueryParameters parameters) {
    Expression result = Expressions.alwaysTrue();
    for (Comparison written : comparisons) {
      Comparison comparison = resolve(written, parameters);
      if (comparison == null) {
        continue;
      }
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

  /** {@code comparison} with a parameter replaced by its bound value as a literal, or null when it cannot prune. */
  private static Comparison resolve(Comparison comparison, QueryParameters parameters) {
    if (!StatementAnalyzer.PARAMETER.equals(comparison.literalKind())) {
      return comparison;
    }
    QueryParameters.Value value = parameters.parameter(comparison.literalText());
    if (value == null) {
      return null;
    }
    switch (value.kind()) {
      case INTEGER:
        return new Comparison(comparison.column(), comparison.operator(), "INTEGER", value.text());
      case STRING:
      case DATE:
        return new Comparison(comparison.column(), comparison.operator(), "STRING", value.text());
      default:
        return null;
    }
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
    String schemaName = SqlQuoting.identifier(name.schema());
    String viewName = schemaName + "." + SqlQuoting.identifier(name.table());
    execute(connection, "CREATE SCHEMA IF NOT EXISTS " + schemaName);
    List<PlannedFile> clean = new ArrayList<>();
    List<PlannedFile> withDeletes = new ArrayList<>();
    for (PlannedFile file : table.files()) {
      (file.deletedPositions().length == 0 ? clean : withDeletes).add(file);
    }
    String deletes = null;
    if (!withDeletes.isEmpty()) {
      deletes = META_SCHEMA + ".deletes_" + number;
      execute(connection, "CREATE TABLE " + deletes + " (file VARCHAR, pos BIGINT)");
      try (DuckDBAppender appender = ((DuckDBConnection) connection).createAppender(META_SCHEMA, "deletes_" + number)) {
        for (PlannedFile file : withDeletes) {
          for (long position : file.deletedPositions()) {
            appender.beginRow().append(file.localPath()).append(position).endRow();
          }
        }
      }
    }
    SnapshotPlanCache.Plan plan = table.plan();
    boolean byName = plan != null && !table.evolved() && !Boolean.FALSE.equals(plan.readsByName);
    if (byName && plan.readsByName == null) {
      // First use of this snapshot's plan: check that DuckDB sees the Iceberg columns and types
      // when reading by name, and remember the answer for every later query on the snapshot.
      boolean matches;
      try {
        FieldIdProjection names = FieldIdProjection.byName(schema);
        execute(connection, "CREATE VIEW " + viewName + " AS " + viewSql(schema, clean, withDeletes, deletes, file -> names));
        matches = viewColumnsMatch(connection, name, schema);
        if (!matches) {
          execute(connection, "DROP VIEW " + viewName);
        }
      } catch (SQLException e) {
        matches = false;
      }
      plan.readsByName = matches;
      if (matches) {
        return;
      }
      byName = false;
    }
    Function<PlannedFile, FieldIdProjection> projection;
    if (byName) {
      FieldIdProjection names = FieldIdProjection.byName(schema);
      projection = file -> names;
    } else if (plan == null || !FieldIdProjection.needsFileLayout(schema)) {
      FieldIdProjection ids = FieldIdProjection.byFieldId(schema, null);
      projection = file -> ids;
    } else {
      Map<PlannedFile, FieldIdProjection> projections = new java.util.IdentityHashMap<>();
      for (PlannedFile file : table.files()) {
        projections.put(file, FieldIdProjection.byFieldId(schema, fileSchema(table, file)));
      }
      projection = projections::get;
    }
    execute(connection, "CREATE VIEW " + viewName + " AS " + viewSql(schema, clean, withDeletes, deletes, projection));
  }

  /** The schema {@code file} was written with, read from its footer once per location. */
  private Schema fileSchema(PlannedTable table, PlannedFile file) {
    try {
      return footers.schema(file.location(), Path.of(file.localPath()));
    } catch (SeException e) {
      if (!java.nio.file.Files.exists(Path.of(file.localPath()))) {
        // Expiry deleted the pinned snapshot's file after it was planned.
        throw SnapshotExpiredException.missingFiles(table.displayName(), table.table(), table.snapshotId(), e);
      }
      // The footer reader's message names server paths; the client learns which table failed.
      throw SeException.unavailable("table " + table.displayName() + ": cannot read the footer of a data file", e);
    }
  }

  /**
   * The view's query. Read by field id ({@code schema} map) the files of any schema version read
   * right, but DuckDB then knows neither row counts nor column statistics and plans joins
   * blindly; so files of a table that never changed its schema are read by name, which is the
   * same thing for them. Files are grouped by {@code projection} (one group unless a struct
   * column must be read per file layout, see {@link FieldIdProjection}). Deleted positions are
   * removed by an anti-join only for files that have some.
   */
  private static String viewSql(Schema schema, List<PlannedFile> clean, List<PlannedFile> withDeletes, String deletes,
      Function<PlannedFile, FieldIdProjection> projection) {
    List<String> parts = new ArrayList<>();
    for (Map.Entry<FieldIdProjection, List<PlannedFile>> group : byProjection(clean, projection).entrySet()) {
      FieldIdProjection read = group.getKey();
      parts.add("SELECT " + read.selectList() + " FROM read_parquet(" + fileList(group.getValue()) + read.readOptions() + ")");
    }
    for (Map.Entry<FieldIdProjection, List<PlannedFile>> group : byProjection(withDeletes, projection).entrySet()) {
      FieldIdProjection read = group.getKey();
      parts.add("SELECT " + read.selectList() + " FROM read_parquet(" + fileList(group.getValue()) + read.readOptions()
          + ", filename = '__se_file', file_row_number = true) AS data WHERE NOT EXISTS (SELECT 1 FROM "
          + deletes + " AS d WHERE d.file = data.__se_file AND d.pos = data.file_row_number)");
    }
    if (parts.isEmpty()) {
      StringJoiner empty = new StringJoiner(", ");
      for (Types.NestedField field : schema.columns()) {
        empty.add("CAST(NULL AS " + IcebergTypes.duckdbType(field.name(), field.type()) + ") AS " + SqlQuoting.identifier(field.name()));
      }
      parts.add("SELECT " + empty + " WHERE false");
    }
    return String.join(" UNION ALL ", parts);
  }

  /** Whether the view has exactly the schema's column names and DuckDB types, in order. */
  private static boolean viewColumnsMatch(Connection connection, TableName name, Schema schema) throws SQLException {
    List<String> expected = new ArrayList<>();
    for (Types.NestedField field : schema.columns()) {
      expected.add(field.name() + " " + IcebergTypes.duckdbType(field.name(), field.type()));
    }
    List<String> actual = new ArrayList<>();
    try (PreparedStatement columns = connection.prepareStatement("SELECT column_name, data_type FROM duckdb_columns() "
        + "WHERE database_name = 'default' AND schema_name = ? AND table_name = ? ORDER BY column_index")) {
      columns.setString(1, name.schema());
      columns.setString(2, name.table());
      try (ResultSet rows = columns.executeQuery()) {
        while (rows.next()) {
          actual.add(rows.getString(1) + " " + rows.getString(2));
        }
      }
    }
    return actual.equals(expected);
  }

  /** Files grouped by how they are read, in plan order. */
  private static Map<FieldIdProjection, List<PlannedFile>> byProjection(List<PlannedFile> files,
      Function<PlannedFile, FieldIdProjection> projection) {
    Map<FieldIdProjection, List<PlannedFile>> groups = new LinkedHashMap<>();
    for (PlannedFile file : files) {
      groups.computeIfAbsent(projection.apply(file), k -> new ArrayList<>()).add(file);
    }
    return groups;
  }

  private static String fileList(List<PlannedFile> files) {
    StringJoiner list = new StringJoiner(", ", "[", "]");
    files.forEach(file -> list.add(SqlQuoting.literal(file.localPath())));
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

  private static void execute(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }

  /** Closes the parser; the databases belong to the DuckDB runtime, which closes them. */
  @Override
  public void close() {
    try {
      parser.close();
    } catch (SQLException ignored) {
      // Shutting down; the parser holds no data.
    }
  }
}
