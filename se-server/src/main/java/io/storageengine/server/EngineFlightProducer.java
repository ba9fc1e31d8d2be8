package io.storageengine.server;

import io.storageengine.auth.Action;
import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.ingest.IngestFlightProducer;
import io.storageengine.ingest.IngestService;
import io.storageengine.query.QueryConfig;
import io.storageengine.query.PendingWal;
import io.storageengine.query.QueryFlightSqlProducer;
import io.storageengine.query.QueryMetadataInterceptor;
import io.storageengine.reconcile.WalTailRows;
import io.storageengine.wal.WalLog;
import java.util.Optional;
import java.util.concurrent.ThreadFactory;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The one Flight producer of the listener: Flight SQL queries, and the admission of Flight SQL
 * bulk ingest (ingest DoPuts, native and bulk, never reach it: the listener's DoPut hands them to
 * {@link IngestService#serveDoPut}). Every catalog a query selects needs the caller to be a
 * reader of it, bulk ingest a writer ({@link Access}); the native DoPut is checked by the ingest
 * service's catalogs ({@link Access#forCallers}).
 */
final class EngineFlightProducer extends QueryFlightSqlProducer {
  private final IngestService ingest;
  private final Access access;

  /**
   * @param threads makes the query side's background threads
   * @param pending what {@code "t$wal"} shows of the cluster's WAL
   * @param wal the cluster's WAL: queries read what is acknowledged and not yet reconciled
   * @param tailRows applies the WAL tail to a table's snapshot with reconciliation's code
   */
  EngineFlightProducer(BufferAllocator allocator, TenantCatalogs catalogs, DuckRuntime duckdb, QueryConfig config,
      IngestService ingest, ThreadFactory threads, Access access, PendingWal pending, WalLog wal,
      WalTailRows tailRows) {
    super(allocator, catalogs, duckdb, config, true, threads, pending, wal, tailRows);
    this.ingest = ingest;
    this.access = access;
  }

  @Override
  protected void authorizeRead(String catalogId) {
    access.require(Access.flightCaller(), catalogId, Action.READ);
  }

  /** The principal {@link Access#flightInterceptor} established ({@code anonymous} in mode none). */
  @Override
  protected String callerName() {
    return Access.flightCaller().name();
  }

  /**
   * Admits a bulk ingest ({@link IngestService#serveDoPut(io.grpc.ServerServiceDefinition,
   * java.util.function.UnaryOperator)} asks, on the call's context): a command without a
   * {@code catalog} ingests into the catalog the call selects (the {@code se-query-metadata}
   * header or the session), as drivers that select the tenant by header send it; both given and
   * different: INVALID_ARGUMENT. The caller must be a writer of the catalog.
   */
  FlightSql.CommandStatementIngest admitBulkIngest(FlightSql.CommandStatementIngest command) {
    Optional<String> selected = callCatalogId();
    String named = command.hasCatalog() ? command.getCatalog() : "";
    if (!named.isEmpty() && selected.isPresent() && !selected.get().equals(named)) {
      throw new SeException(ErrorCode.INVALID_ARGUMENT, String.format("catalog: the command names `%s`, but the "
          + "call selects `%s` (header %s or session): send one of them, or the same catalog in both", named,
          selected.get(), QueryMetadataInterceptor.HEADER_NAME));
    }
    FlightSql.CommandStatementIngest resolved = named.isEmpty() && selected.isPresent()
        ? command.toBuilder().setCatalog(selected.get()).build() : command;
    if (!resolved.getCatalog().isEmpty()) {
      access.require(Access.flightCaller(), resolved.getCatalog(), Action.WRITE);
    }
    return resolved;
  }

  /**
   * The {@link io.storageengine.ingest.ProducerState} action is ingestion's (authorized by the
   * ingest service's catalogs, like a native DoPut); every other action is Flight SQL's.
   */
  @Override
  public void doAction(CallContext context, org.apache.arrow.flight.Action action,
      StreamListener<Result> listener) {
    if (IngestFlightProducer.isProducerState(action)) {
      IngestFlightProducer.serveProducerState(ingest, action, listener);
      return;
    }
    super.doAction(context, action, listener);
  }

  /** Bulk ingest never reaches the producer: the listener's DoPut serves it ({@link #admitBulkIngest}). */
  @Override
  public Runnable acceptPutStatementBulkIngest(FlightSql.CommandStatementIngest command, CallContext context,
      FlightStream stream, StreamListener<PutResult> ackStream) {
    return () -> ackStream.onError(IngestFlightProducer.notServed("bulk ingest"));
  }
}
