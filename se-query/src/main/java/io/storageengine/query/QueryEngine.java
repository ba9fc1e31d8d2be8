package io.storageengine.query;

import io.storageengine.catalog.TableStateCache;
import io.storageengine.catalog.TableSettings;
import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.Cancel;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.common.Threads;
import io.storageengine.duckdb.DataFileCache;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.duckdb.QueryDatabasePool;
import io.storageengine.duckdb.SqlQuoting;
import io.storageengine.query.StatementAnalyzer.Analysis;
import io.storageengine.query.StatementAnalyzer.TableName;
import io.storageengine.query.TableSnapshotPlanner.PlannedFile;
import io.storageengine.query.TableSnapshotPlanner.PlannedTable;
import io.storageengine.reconcile.WalHighWaterMark;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
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
 * ({@link MetadataStatements}). A reference with time travel is read at the snapshot its clause
 * names ({@link TimeTravel}) through a view of its own; a metadata table ({@code "t$files"}, ...)
 * is materialized from the table's metadata ({@link MetadataTables}). The database reads only below the tenant's data directories,
 * changes no setting and loads no extension; each query gets a fresh in-memory catalog
 * {@code default} for its views, detached when it ends.
 *
 * <p>The {@link QueryLimits} hold here: a statement beyond the size and nesting limits is refused
 * before anything parses it ({@link StatementLimits}); a query is planned only once
 * {@link QueryAdmission} admits it, holds its admission until it is closed (given back as soon as
 * its close has closed its DuckDB connection, before its database is reset for the next query:
 * a client's next query, sent the moment it has this one's result, gets the full
 * {@code query.duckdb-threads}, not what the reset leaves), and is stopped
 * ({@link PreparedQuery#stop}, TIMED_OUT naming {@code query.timeout}) when it runs longer than
 * the timeout after its admission, planning included (an entity WAL tail's fold is interrupted, see
 * {@link Cancel}; so is a fold whose gRPC call was cancelled). Its DuckDB database has the threads its admission gave it
 * ({@link QueryAdmission.Permit#threads}).
 */
final class QueryEngine implements AutoCloseable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(QueryEngine.class);
  /** Plans of a query without pins whose current snapshot is expired while it is planned. */
  static final int MAX_PLAN_ATTEMPTS = 3;
  /** The DuckDB schemas (numbered) of the views of references with time travel. */
  static final String TRAVEL_SCHEMA = "__se_at_";

  private final TenantCatalogs catalogs;
  private final SnapshotPlanCache plans = new SnapshotPlanCache();
  private final TableSnapshotPlanner planner;
  private final QueryDatabasePool pool;
  private final TableViews views;
  private final StatementParser parser;
  private final TableStateCache tables = new TableStateCache();
  private final PendingWal wal;
  /** The WAL tails of the tables; null: every query reads snapshots only. */
  private final WalTail tail;
  private final QueryLimits limits;
  private final StatementLimits statementLimits;
  private final QueryAdmission admission;
  private final ScheduledThreadPoolExecutor timeouts;
  /** The threads queries run on, one per running query (see {@link QueryThreads}). */
  private final QueryThreads runners;
  private final java.util.concurrent.atomic.AtomicLong demoted = new java.util.concurrent.atomic.AtomicLong();
  /** Grows the tail folds of entity tables read whole in the background; null: none (no tail, or off). */
  private final TailWarmer warmer;

  /**
   * @param duckdb the process's DuckDB runtime: the engine's databases, data file copies and
   *     footers are its (closing the engine leaves them to it); every query reads snapshots only
   */
  QueryEngine(TenantCatalogs catalogs, DuckRuntime duckdb, QueryConfig config) {
    this(catalogs, duckdb, config, PendingWal.NONE);
  }

  /** As above, {@code wal} answering what {@code "t$wal"} shows (see {@link MetadataTables}). */
  QueryEngine(TenantCatalogs catalogs, DuckRuntime duckdb, QueryConfig config, PendingWal wal) {
    this(catalogs, duckdb, config, wal, null);
  }

  /**
   * As above, {@code wal} answering what {@code "t$wal"} shows (see {@link MetadataTables}) and
   * {@code tail} reading the acknowledged WAL after each table's snapshot ({@link ReadMode#LATEST};
   * null when the process has no WAL, and queries read snapshots only).
   */
  QueryEngine(TenantCatalogs catalogs, DuckRuntime duckdb, QueryConfig config, PendingWal wal, WalTail tail) {
    this.wal = wal;
    this.tail = tail;
    this.catalogs = catalogs;
    this.planner = new TableSnapshotPlanner(duckdb, plans);
    this.pool = duckdb.queryDatabases(config.duckdbMemoryLimit(), config.duckdbThreads(), config.limits().spillLimit());
    this.views = new TableViews(duckdb.footers());
    this.limits = config.limits();
    this.statementLimits = StatementLimits.of(limits);
    this.parser = new StatementParser(statementLimits);
    this.admission = new QueryAdmission(limits, config.memoryLimitBytes(), config.duckdbThreads());
    this.timeouts = Threads.scheduledPool(1, Threads.daemonNamed("se-query-timeouts"));
    this.timeouts.setRemoveOnCancelPolicy(true);
    this.runners = new QueryThreads(Threads.daemon("se-query-run"));
    this.warmer = tail != null && tail.readsEntities() && !config.tailWarmInterval().isZero()
        ? new TailWarmer(new TailWarmer.Warm() {
          @Override
          public boolean behind(TailWarmer.HotTable table) {
            return tail.foldBehind(table.catalogId(), table.uuid());
          }

          @Override
          public void warm(TailWarmer.HotTable table, Cancel cancel) {
            warmTail(table, cancel);
          }
        }, config.tailWarmInterval())
        : null;
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
    statementLimits.check(sql);
    QueryAdmission.Permit permit = admission.admit(catalogId);
    long admitted = System.nanoTime();
    SeException timedOut = new SeException(ErrorCode.TIMED_OUT, String.format("query ran longer than %s, the "
        + "server's limit (--query.timeout): it was stopped", QueryAdmission.format(limits.timeout())));
    // The timeout counts from the admission: planning (an entity WAL tail's fold can take long)
    // stops at it too, and so does a call its client gave up on.
    Cancel stop = new Cancel();
    ScheduledFuture<?> timer = null;
    try {
      timer = timeouts.schedule(() -> stop.cancel(timedOut), limits.timeout().toNanos(), TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // The engine is closing: the query's database is closed with it.
    }
    PreparedQuery query;
    try (CallCancellation ignored = CallCancellation.watch(() -> stop.cancel(PreparedQuery.cancelledError()))) {
      query = plan(catalogId, sql, pins, parameters, read, permit, stop);
    } catch (RuntimeException e) {
      if (timer != null) {
        timer.cancel(false);
      }
      permit.close();
      throw e;
    }
    Cancel.Registration stops = stop.onCancel(() -> query.stop(stop.reason()));
    query.closeWith(stops::close);
    if (timer != null) {
      ScheduledFuture<?> armed = timer;
      query.closeWith(() -> armed.cancel(false));
    }
    QueryThreads.Worker worker = runners.take();
    query.runOn(worker);
    demoteLater(query, admitted);
    // After the query's connection and database are closed, so no work of it runs any more (the
    // permit is given back earlier, once its connection is closed: see prepareOnce).
    query.closeWith(worker);
    query.closeWith(permit);
    return query;
  }

  /**
   * Lowers the priority of {@code query}'s threads once it has run {@link QueryLimits#demoteAfter}
   * since its admission at {@code admitted} (never when that is zero), unless it ended before.
   */
  private void demoteLater(PreparedQuery query, long admitted) {
    if (limits.demoteAfter().isZero()) {
      return;
    }
    long delay = Math.max(0, admitted + limits.demoteAfter().toNanos() - System.nanoTime());
    try {
      ScheduledFuture<?> demotion = timeouts.schedule(() -> {
        demoted.incrementAndGet();
        query.lowerPriority(limits.demotedNice());
      }, delay, TimeUnit.NANOSECONDS);
      query.closeWith(() -> demotion.cancel(false));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // The engine is closing.
    }
  }

  /** Queries whose threads' priority was lowered so far (see {@link QueryLimits#demoteAfter}). */
  long demoted() {
    return demoted.get();
  }

  private PreparedQuery plan(String catalogId, String sql, Map<String, SnapshotPin> pins, QueryParameters parameters,
      ReadMode read, QueryAdmission.Permit permit, Cancel stop) {
    for (int attempt = 1; ; attempt++) {
      try {
        return prepareOnce(catalogId, sql, pins, parameters, read, permit, stop);
      } catch (SnapshotExpiredException e) {
        if (!pins.isEmpty() || attempt >= MAX_PLAN_ATTEMPTS) {
          throw e;
        }
      }
    }
  }

  private PreparedQuery prepareOnce(String catalogId, String sql, Map<String, SnapshotPin> pins,
      QueryParameters parameters, ReadMode readMode, QueryAdmission.Permit permit, Cancel stop) {
    int threads = permit.threads();
    List<String> statements = SqlText.statements(sql);
    if (statements.isEmpty()) {
      throw SeException.invalid("SQL is empty");
    }
    if (statements.size() > 1) {
      throw SeException.invalid("multiple statements are not allowed (found %d): send one query per call", statements.size());
    }
    String written = statements.get(0);
    Explain.Mode explainMode = Explain.mode(written);
    Explain explain = explainMode == Explain.Mode.NONE ? null : new Explain(explainMode);
    if (explain != null) {
      written = Explain.inner(written, explainMode);
    }
    String statement = SqlText.rewrite(written);
    Catalog catalog = catalogs.catalog(catalogId);
    List<AutoCloseable> resources = new ArrayList<>();
    List<DataFileCache.Lease> leases = new ArrayList<>();
    QueryDatabasePool.Lease database = null;
    List<PreparedQuery.TableRead> reads = new ArrayList<>();
    // Where planning goes (DEBUG): per table its load, snapshot plan and WAL tail, then the rest.
    long started = System.nanoTime();
    StringBuilder timings = LOG.isDebugEnabled() ? new StringBuilder() : null;
    try {
      StatementParser.Analyzed analyzed = parser.analyze(statement);
      Analysis analysis = analyzed.analysis();
      if (explain != null && analysis.kind() != StatementAnalyzer.Kind.QUERY) {
        throw SeException.invalid("EXPLAIN explains queries only (SELECT ...): DESCRIBE and SHOW are answered by the "
            + "catalog, with no plan");
      }
      Map<String, SnapshotPin> used = new LinkedHashMap<>();
      Map<TableName, PlannedTable> planned = new LinkedHashMap<>();
      Map<String, TimeTravel.Spec> travel = new LinkedHashMap<>();
      analysis.travel().forEach(reference -> travel.put(reference.key(), reference.spec()));
      // The view each time travel key is read through (its references are renamed to it).
      Map<String, TableName> travelViews = new LinkedHashMap<>();
      List<MetadataRead> metadata = new ArrayList<>();
      Map<TableName, InlineTail> inlineTails = new LinkedHashMap<>();
      Schema describe = null;
      for (Map.Entry<String, TableName> entry : analysis.tables().entrySet()) {
        TableName name = entry.getValue();
        String metadataKind = analysis.metadataTables().get(entry.getKey());
        if (metadataKind != null) {
          TableName base = new TableName(name.schema(), MetadataTables.baseTable(name.table()), name.namespace());
          TableIdentifier baseId = TableIdentifier.of(TenantMetadata.namespace(base.namespace()), base.table());
          Table table = load(catalogId, catalog, baseId, base);
          if (analysis.kind() == StatementAnalyzer.Kind.DESCRIBE_TABLE) {
            describe = MetadataTables.schema(table, metadataKind);
          } else {
            metadata.add(new MetadataRead(name, table, metadataKind, TenantMetadata.displayName(baseId)));
            if (explain != null) {
              explain.metadataTable(TenantMetadata.displayName(
                  TableIdentifier.of(TenantMetadata.namespace(name.namespace()), name.table())));
            }
          }
          continue;
        }
        TableIdentifier id = TableIdentifier.of(TenantMetadata.namespace(name.namespace()), name.table());
        long tableStarted = System.nanoTime();
        Table table = load(catalogId, catalog, id, name);
        long loaded = System.nanoTime();
        TimeTravel.Spec at = travel.get(entry.getKey());
        SnapshotPin pin = pins.get(entry.getKey());
        if (pin == null) {
          pin = at == null ? SnapshotPin.current(table) : TimeTravel.pin(table, TenantMetadata.displayName(id), at);
        }
        Schema schema = table.schemas().get(pin.schemaId());
        if (analysis.kind() == StatementAnalyzer.Kind.DESCRIBE_TABLE && schema != null) {
          // Answered from the catalog: no files are planned or read.
          used.put(entry.getKey(), pin);
          describe = schema;
          continue;
        }
        Expression filter = schema == null ? Expressions.alwaysTrue()
            : FilterPushdown.filter(schema, analysis.filters().getOrDefault(entry.getKey(), List.of()), parameters);
        TableName view = name;
        if (at != null) {
          view = new TableName(TRAVEL_SCHEMA + travelViews.size(), name.table(), name.namespace());
          travelViews.put(entry.getKey(), view);
        }
        boolean pinned = pins.containsKey(entry.getKey());
        // Time travel reads the snapshot it names, never the WAL after it.
        boolean withTail = pinned ? pin.walThrough() != null : readMode == ReadMode.LATEST && at == null;
        TableSettings settings = withTail && tail != null ? settings(table) : null;
        boolean entity = settings != null && settings.entity();
        boolean readsTail = settings != null && (!entity || tail.readsEntities());
        // An entity table's latest state read as an older snapshot plus the tail's fold kept on
        // it, when that fold holds what the newer snapshots reconciled (no fold starts over).
        Snapshot snapshot = pin.snapshotId() == null ? null : table.snapshot(pin.snapshotId());
        Snapshot carried = readsTail && entity && !pinned && at == null
            ? tail.carriedBase(catalogId, table, snapshot) : null;
        SnapshotPin carriedPin = carried == null ? null : new SnapshotPin(carried.snapshotId(), pin.schemaId());
        PlannedTable plannedTable = planner.plan(catalogId, TenantMetadata.displayName(id), table,
            carriedPin == null ? pin : carriedPin, filter, leases);
        long plannedAt = System.nanoTime();
        WalTail.Read tailRead = null;
        long afterSeq = 0;
        PlannedTable snapshotFiles = plannedTable;
        Long carriedFrom = null;
        if (readsTail) {
          // New append segments are read inline, from their frames, unless the plan is explained
          // or reads row lineage (those read the tail from staged files).
          boolean inline = explain == null && !analysis.lineage();
          // Of an entity table whose every row the statement reads has given keys, those keys'
          // rows alone (unless a kept fold already holds the whole tail).
          FilterPushdown.KeyFilter keyFilter = entity ? FilterPushdown.keyFilter(plannedTable.schema(), settings.primaryKey(),
              analysis.filters().getOrDefault(entry.getKey(), List.of()), parameters) : null;
          WalTail.Read read = null;
          if (carried != null) {
            afterSeq = WalHighWaterMark.of(table, carried);
            read = tail.read(catalogId, plannedTable.displayName(), table, carried, plannedTable.schema(), true,
                afterSeq, null, leases, inline, stop, true, keyFilter);
            if (read != null) {
              carriedFrom = pin.snapshotId();
              pin = carriedPin;
            } else {
              plannedTable = planner.plan(catalogId, TenantMetadata.displayName(id), table, pin, filter, leases);
              snapshotFiles = plannedTable;
            }
          }
          if (read == null) {
            // The snapshot's data files (less the rows the tail replaces) plus what the WAL
            // segments it does not include yet add.
            afterSeq = WalHighWaterMark.of(table, snapshot);
            read = tail.read(catalogId, plannedTable.displayName(), table, snapshot, plannedTable.schema(),
                entity, afterSeq, pinned ? pin.walThrough() : null, leases, inline, stop, false, keyFilter);
          }
          pin = pin.withWalThrough(read.throughSeq());
          if (entity && warmer != null && !pinned && keyFilter == null) {
            warmer.read(new TailWarmer.HotTable(catalogId, id, table.uuid()));
          }
          if (read.loadsInline()) {
            inlineTails.put(view, new InlineTail(entry.getKey(), plannedTable, read, pinned));
          }
          plannedTable = plannedTable.withFiles(withTail(plannedTable.files(), read));
          tailRead = read;
        }
        if (explain != null) {
          explain.table(snapshotFiles, at == null ? null : at.written(), pinned, filter,
              tailRead, afterSeq, carriedFrom);
        }
        used.put(entry.getKey(), pin);
        planned.put(view, plannedTable);
        if (timings != null) {
          timings.append(String.format(java.util.Locale.ROOT, "%s%s: load %d ms, plan %d ms (%d files%s), tail %d ms",
              timings.isEmpty() ? "" : "; ", TenantMetadata.displayName(id), (loaded - tableStarted) / 1_000_000,
              (plannedAt - loaded) / 1_000_000, plannedTable.files().size(), carriedFrom != null ? ", carried fold" : "",
              (System.nanoTime() - plannedAt) / 1_000_000));
        }
      }
      long tablesDone = System.nanoTime();
      for (PlannedTable table : planned.values()) {
        if (table.snapshotId() != null) {
          reads.add(new PreparedQuery.TableRead(table.displayName(), table.table(), table.snapshotId(),
              table.files().stream().map(PlannedFile::localPath).toList()));
        }
      }
      database = pool.acquire(catalogId, TableViews.directories(planned.values()), threads);
      Connection connection = database.connection();
      int tailNumber = 0;
      for (Map.Entry<TableName, InlineTail> entry : inlineTails.entrySet()) {
        InlineTail inline = entry.getValue();
        PlannedTable snapshotFiles = inline.snapshotFiles();
        WalTail.Read loaded = tail.load(database.connection(), catalogId, snapshotFiles.displayName(),
            snapshotFiles.table().uuid(), snapshotFiles.schema(), inline.read(),
            QueryDatabasePool.META_SCHEMA + ".wal_tail_" + tailNumber++ + "_", inline.pinned());
        used.put(inline.key(), used.get(inline.key()).withWalThrough(loaded.throughSeq()));
        planned.put(entry.getKey(), snapshotFiles.withFiles(withTail(snapshotFiles.files(), loaded))
            .withTailTables(loaded.tables()));
      }
      if (describe != null) {
        statement = MetadataStatements.describe(connection, describe);
      }
      int viewNumber = 0;
      TableViews.Batch viewStatements = new TableViews.Batch(connection);
      for (Map.Entry<TableName, PlannedTable> entry : planned.entrySet()) {
        views.create(viewStatements, entry.getKey(), entry.getValue(), viewNumber++, analysis.lineage());
      }
      viewStatements.run();
      for (MetadataRead read : metadata) {
        MetadataTables.create(connection, read.name(), read.table(), read.kind(), read.displayName(), catalogId, wal);
      }
      if (analysis.kind() == StatementAnalyzer.Kind.SHOW_TABLES) {
        statement = MetadataStatements.showTables(connection, catalog);
      }
      if (!analysis.informationSchema().isEmpty()) {
        MetadataStatements.materializeInformationSchema(connection, catalog, analysis.informationSchema());
      }
      if (describe == null) {
        boolean hideLineage = analysis.lineage()
            && planned.values().stream().allMatch(table -> RowLineage.hidesBoth(table.schema()));
        statement = renameReferences(statement, analysis, travelViews, hideLineage);
      }
      if (explain != null) {
        explain.countTailRows(connection);
        explain.hide(TableViews.directories(planned.values()));
      }
      resources.addAll(leases);
      resources.add(database);
      List<ResultColumns.Origin> origins = List.of();
      if (analyzed.select() != null && analysis.kind() == StatementAnalyzer.Kind.QUERY
          && analysis.informationSchema().isEmpty()) {
        // The one table of the select; a reference with time travel is planned under its view's name.
        PlannedTable read = travelViews.size() == 1 && planned.size() == 1 ? planned.values().iterator().next()
            : planned.get(analyzed.select().table());
        origins = ResultColumns.origins(analyzed.select(), read == null ? null : read.schema());
      }
      if (explain == null && analysis.kind() == StatementAnalyzer.Kind.QUERY
          && planned.values().stream().anyMatch(table -> VariantResults.holdsVariant(table.schema()))) {
        statement = VariantResults.asJson(connection, statement);
      }
      PreparedQuery query = new PreparedQuery(connection, statement, used, parameters, reads, resources, origins);
      if (timings != null) {
        LOG.debug("planned a query in {} ms: {}; database and views {} ms", (System.nanoTime() - started) / 1_000_000,
            timings, (System.nanoTime() - tablesDone) / 1_000_000);
      }
      if (explain != null) {
        query.explainWith(explain);
      }
      QueryDatabasePool.Lease lease = database;
      query.lowerDatabaseWith(lease::lowerPriority);
      // The admission ends with the query's DuckDB work, before the reset (see the class comment);
      // prepare also closes the permit with the query, for a close that never reaches the lease.
      lease.afterQuery(permit::close);
      query.rerunWith(new PreparedQuery.MaterializingConnection() {
        @Override
        public Connection open() throws SQLException {
          return lease.materializing();
        }

        @Override
        public void release() {
          lease.endMaterializing();
        }
      });
      return query;
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
        out.add(new PlannedFile(file.location(), file.localPath(), merged, file.firstRowId(),
            file.dataSequenceNumber()));
      }
    }
    out.addAll(read.files());
    return out;
  }

  /**
   * {@code statement} reading the emulated information_schema views and, for each reference with
   * time travel, the view of its snapshot (the clause removed), and with {@code hideLineage}
   * the lineage columns excluded from plain stars ({@link RowLineage#starExclusion}), in one pass
   * over the statement (see {@link StatementSplice}).
   */
  private static String renameReferences(String statement, Analysis analysis, Map<String, TableName> travelViews,
      boolean hideLineage) {
    List<StatementAnalyzer.Span> spans = new ArrayList<>(analysis.informationSchema());
    Map<StatementAnalyzer.Span, String> renamed = new HashMap<>();
    for (StatementAnalyzer.Travel reference : analysis.travel()) {
      TableName view = travelViews.get(reference.key());
      if (view != null) {
        spans.add(reference.span());
        renamed.put(reference.span(), SqlQuoting.identifier(view.schema()) + "." + SqlQuoting.identifier(view.table()));
      }
    }
    Map<Integer, String> insertions = new HashMap<>();
    if (hideLineage) {
      analysis.stars().forEach(offset -> insertions.put(offset, RowLineage.starExclusion()));
    }
    if (spans.isEmpty() && insertions.isEmpty()) {
      return statement;
    }
    return StatementSplice.replace(statement, spans,
        span -> span.timeTravel() ? renamed.get(span) : MetadataStatements.informationSchemaCopy(span), insertions);
  }

  /**
   * A WAL tail whose new segments are loaded on the query's connection ({@link WalTail#load}):
   * the reference's key, the table planned at its snapshot, what the tail read and whether the
   * reference was pinned.
   */
  private record InlineTail(String key, PlannedTable snapshotFiles, WalTail.Read read, boolean pinned) {}

  /** A metadata table the statement reads: the name it uses, the table and which of its metadata. */
  private record MetadataRead(TableName name, Table table, String kind, String displayName) {}

  /** The SQL keywords of the dialect (see {@link StatementParser#keywords}). */
  List<String> keywords() {
    return parser.keywords();
  }

  /** Plans cached so far (for tests). */
  SnapshotPlanCache plans() {
    return plans;
  }

  /** The WAL tails read, null when queries read snapshots only (for tests). */
  WalTail tail() {
    return tail;
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

  /**
   * Grows the kept WAL tail fold of the entity table {@code hot} to the tail's end, as a query
   * reading the table whole now would (see {@link #prepareOnce}): on the older snapshot the fold
   * is carried on when it extends there, else on the current snapshot. Nothing when the table is
   * gone, replaced or no longer an entity table.
   */
  private void warmTail(TailWarmer.HotTable hot, Cancel cancel) {
    Catalog catalog = catalogs.catalog(hot.catalogId());
    Table table = tables.current(hot.catalogId(), catalog, hot.id(), () -> catalog.loadTable(hot.id()));
    TableSettings settings = settings(table);
    if (!table.uuid().equals(hot.uuid()) || settings == null || !settings.entity()) {
      return;
    }
    String displayName = TenantMetadata.displayName(hot.id());
    Snapshot current = table.currentSnapshot();
    Snapshot carried = tail.carriedBase(hot.catalogId(), table, current);
    List<DataFileCache.Lease> leases = new ArrayList<>();
    try {
      WalTail.Read read = carried == null ? null : tail.read(hot.catalogId(), displayName, table, carried,
          table.schema(), true, WalHighWaterMark.of(table, carried), null, leases, false, cancel, true);
      if (read == null) {
        tail.read(hot.catalogId(), displayName, table, current, table.schema(), true,
            WalHighWaterMark.of(table, current), null, leases, false, cancel, false);
      }
    } finally {
      leases.forEach(DataFileCache.Lease::close);
    }
  }

  /** The warmer of entity tables' tail folds, or null (tests). */
  TailWarmer warmer() {
    return warmer;
  }

  /** The limits queries run under (for tests). */
  QueryLimits limits() {
    return limits;
  }

  /** The admission of queries (the producer lets its idle planned queries give theirs back; tests). */
  QueryAdmission admission() {
    return admission;
  }

  /** Closes the parser and the timer; the databases belong to the DuckDB runtime, which closes them. */
  @Override
  public void close() {
    if (warmer != null) {
      warmer.close();
    }
    timeouts.shutdownNow();
    runners.close();
    if (tail != null) {
      tail.close();
    }
    parser.close();
  }
}
