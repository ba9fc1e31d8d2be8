package io.storageengine.query;

import io.storageengine.catalog.TableSettings;
import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DataFileCache;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.duckdb.QueryDatabasePool;
import io.storageengine.query.StatementAnalyzer.Analysis;
import io.storageengine.query.StatementAnalyzer.TableName;
import io.storageengine.query.TableSnapshotPlanner.PlannedFile;
import io.storageengine.query.TableSnapshotPlanner.PlannedTable;
import io.storageengine.reconcile.WalHighWaterMark;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;

/**
 * Plans SQL over a tenant's Iceberg tables, orchestrating one job per class: it parses and checks
 * the statement ({@link StatementParser}, {@link StatementAnalyzer}), resolves and pins every
 * referenced table, turns the statement's filters on a table into an Iceberg pruning filter
 * ({@link FilterPushdown}), plans the table's files (reusing the plan of a snapshot planned
 * before, {@link TableSnapshotPlanner}), and sets up, on a connection to a locked DuckDB database
 * of the tenant (see {@link QueryDatabasePool}), a view per table over its Parquet files
 * ({@link TableViews}) or the catalog's answer to a metadata statement
 * ({@link MetadataStatements}). The database reads only below the tenant's data directories,
 * changes no setting and loads no extension; each query gets a fresh in-memory catalog
 * {@code default} for its views, detached when it ends.
 */
final class QueryEngine implements AutoCloseable {
  /** Plans of a query without pins whose current snapshot is expired while it is planned. */
  static final int MAX_PLAN_ATTEMPTS = 3;

  private final TenantCatalogs catalogs;
  private final SnapshotPlanCache plans = new SnapshotPlanCache();
  private final TableSnapshotPlanner planner;
  private final QueryDatabasePool pool;
  private final TableViews views;
  private final StatementParser parser;
  private final TableStateCache tables = new TableStateCache();
  /** The WAL tails of the tables; null: every query reads snapshots only. */
  private final WalTail tail;

  /** An engine of a process without WAL: every query reads snapshots only. */
  QueryEngine(TenantCatalogs catalogs, DuckRuntime duckdb, QueryConfig config) {
    this(catalogs, duckdb, config, null);
  }

  /**
   * @param duckdb the process's DuckDB runtime: the engine's databases, data file copies and
   *     footers are its (closing the engine leaves them to it)
   * @param tail reads the acknowledged WAL after each table's snapshot ({@link ReadMode#LATEST});
   *     null when the process has no WAL, and queries read snapshots only
   */
  QueryEngine(TenantCatalogs catalogs, DuckRuntime duckdb, QueryConfig config, WalTail tail) {
    this.catalogs = catalogs;
    this.tail = tail;
    this.planner = new TableSnapshotPlanner(duckdb, plans);
    this.pool = duckdb.queryDatabases(config.duckdbMemoryLimit(), config.duckdbThreads());
    this.views = new TableViews(duckdb.footers());
    this.parser = new StatementParser();
  }

  /**
   * Plans {@code sql} for the tenant {@code catalogId}. Tables found in {@code pins} are read at
   * that state, others at their current snapshot. When maintenance expires the current snapshot
   * of a table while it is planned (its files deleted under the planner), a query without pins is
   * planned again on the new current snapshot; a pinned snapshot that is gone fails with
   * {@link SnapshotExpiredException}. Reads snapshots only ({@link ReadMode#SNAPSHOT}): for calls
   * that need a statement's schema, not its rows.
   */
  PreparedQuery prepare(String catalogId, String sql, Map<String, SnapshotPin> pins) {
    return prepare(catalogId, sql, pins, QueryParameters.NONE, ReadMode.SNAPSHOT);
  }

  /**
   * Plans {@code sql} as {@link #prepare(String, String, Map)} does, with {@code parameters}
   * bound to its parameters when it runs (they also prune files where a column is compared with
   * a parameter). The values are not checked here: see {@link PreparedQuery#checkParameters}.
   * {@code read} says whether tables not in {@code pins} are read with their WAL tail; a pinned
   * table is read as its pin says.
   */
  PreparedQuery prepare(String catalogId, String sql, Map<String, SnapshotPin> pins, QueryParameters parameters,
      ReadMode read) {
    for (int attempt = 1; ; attempt++) {
      try {
        return prepareOnce(catalogId, sql, pins, parameters, read);
      } catch (SnapshotExpiredException e) {
        if (!pins.isEmpty() || attempt >= MAX_PLAN_ATTEMPTS) {
          throw e;
        }
      }
    }
  }

  private PreparedQuery prepareOnce(String catalogId, String sql, Map<String, SnapshotPin> pins,
      QueryParameters parameters, ReadMode readMode) {
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
      StatementParser.Analyzed analyzed = parser.analyze(statement);
      Analysis analysis = analyzed.analysis();
      Map<String, SnapshotPin> used = new LinkedHashMap<>();
      Map<TableName, PlannedTable> planned = new LinkedHashMap<>();
      Schema describe = null;
      for (Map.Entry<String, TableName> entry : analysis.tables().entrySet()) {
        TableName name = entry.getValue();
        TableIdentifier id = TableIdentifier.of(TenantMetadata.namespace(name.namespace()), name.table());
        Table table = load(catalogId, catalog, id, name);
        SnapshotPin pin = pins.getOrDefault(entry.getKey(), SnapshotPin.current(table));
        Schema schema = table.schemas().get(pin.schemaId());
        if (analysis.kind() == StatementAnalyzer.Kind.DESCRIBE_TABLE && schema != null) {
          // Answered from the catalog: no files are planned or read.
          used.put(entry.getKey(), pin);
          describe = schema;
          continue;
        }
        Expression filter = schema == null ? Expressions.alwaysTrue()
            : FilterPushdown.filter(schema, analysis.filters().getOrDefault(entry.getKey(), List.of()), parameters);
        PlannedTable plannedTable = planner.plan(catalogId, TenantMetadata.displayName(id), table, pin, filter, leases);
        boolean withTail = pins.containsKey(entry.getKey()) ? pin.walThrough() != null : readMode == ReadMode.LATEST;
        TableSettings settings = withTail && tail != null ? settings(table) : null;
        boolean entity = settings != null && settings.entity();
        if (settings != null && (!entity || tail.readsEntities())) {
          // The snapshot's data files (less the rows the tail replaces) plus what the WAL
          // segments it does not include yet add.
          Snapshot snapshot = pin.snapshotId() == null ? null : table.snapshot(pin.snapshotId());
          WalTail.Read read = tail.read(catalogId, plannedTable.displayName(), table, snapshot, plannedTable.schema(),
              entity, WalHighWaterMark.of(table, snapshot), pins.containsKey(entry.getKey()) ? pin.walThrough() : null,
              leases);
          pin = pin.withWalThrough(read.throughSeq());
          plannedTable = plannedTable.withFiles(withTail(plannedTable.files(), read));
        }
        used.put(entry.getKey(), pin);
        planned.put(name, plannedTable);
      }
      for (PlannedTable table : planned.values()) {
        if (table.snapshotId() != null) {
          reads.add(new PreparedQuery.TableRead(table.displayName(), table.table(), table.snapshotId(),
              table.files().stream().map(PlannedFile::localPath).toList()));
        }
      }
      database = pool.acquire(catalogId, TableViews.directories(planned.values()));
      Connection connection = database.connection();
      if (describe != null) {
        statement = MetadataStatements.describe(connection, describe);
      }
      int viewNumber = 0;
      for (Map.Entry<TableName, PlannedTable> entry : planned.entrySet()) {
        views.create(connection, entry.getKey(), entry.getValue(), viewNumber++);
      }
      if (analysis.kind() == StatementAnalyzer.Kind.SHOW_TABLES) {
        statement = MetadataStatements.showTables(connection, catalog);
      }
      if (!analysis.informationSchema().isEmpty()) {
        statement = MetadataStatements.informationSchema(connection, catalog, statement, analysis.informationSchema());
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

  /**
   * The engine settings of {@code table}, or null when they break a rule (a table another client
   * made that ingestion refuses has no WAL, and is read at its snapshot as before).
   */
  private static TableSettings settings(Table table) {
    try {
      return TableSettings.of(table);
    } catch (SeException e) {
      return null;
    }
  }

  /** {@code files} with the positions {@code read} replaces removed, followed by the files it adds. */
  private static List<PlannedFile> withTail(List<PlannedFile> files, WalTail.Read read) {
    List<PlannedFile> out = new ArrayList<>(files.size() + read.files().size());
    for (PlannedFile file : files) {
      long[] replaced = read.replacedPositions().get(file.localPath());
      if (replaced == null) {
        out.add(file);
      } else {
        long[] merged = java.util.stream.LongStream.concat(java.util.Arrays.stream(file.deletedPositions()),
            java.util.Arrays.stream(replaced)).sorted().distinct().toArray();
        out.add(new PlannedFile(file.location(), file.localPath(), merged));
      }
    }
    out.addAll(read.files());
    return out;
  }

  /** The SQL keywords of the dialect (see {@link StatementParser#keywords}). */
  List<String> keywords() {
    return parser.keywords();
  }

  /** Plans cached so far (for tests). */
  SnapshotPlanCache plans() {
    return plans;
  }

  /** The pool of DuckDB databases (for tests). */
  QueryDatabasePool pool() {
    return pool;
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

  /** Closes the parser; the databases belong to the DuckDB runtime, which closes them. */
  @Override
  public void close() {
    parser.close();
  }
}
