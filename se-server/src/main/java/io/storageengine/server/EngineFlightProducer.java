package io.storageengine.server;

import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.ingest.IngestService;
import io.storageengine.query.QueryConfig;
import io.storageengine.query.QueryFlightSqlProducer;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The one Flight producer of the listener: Flight SQL queries, plus the two ingestion paths
 * (the native {@code se.ingestion.v1.Ingest} DoPut and Flight SQL bulk ingest).
 */
final class EngineFlightProducer extends QueryFlightSqlProducer {
  private final IngestService ingest;

  EngineFlightProducer(BufferAllocator allocator, TenantCatalogs catalogs, QueryConfig config, IngestService ingest) {
    super(allocator, catalogs, config);
    this.ingest = ingest;
  }

  @Override
  public Runnable acceptPut(CallContext context, FlightStream stream, StreamListener<PutResult> ackStream) {
    if (IngestService.isNativeIngest(stream.getDescriptor())) {
      return ingest.acceptPut(context, stream, ackStream);
    }
    return super.acceptPut(context, stream, ackStream);
  }

  @Override
  public Runnable acceptPutStatementBulkIngest(FlightSql.CommandStatementIngest command, CallContext context,
      FlightStream stream, StreamListener<PutResult> ackStream) {
    return ingest.acceptBulkIngest(command, context, stream, ackStream);
  }
}
