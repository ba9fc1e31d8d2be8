package io.storageengine.ingest;

import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.sql.NoOpFlightSqlProducer;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;

/**
 * A Flight (SQL) producer that serves ingestion only: native DoPut streams and Flight SQL bulk
 * ingest go to the {@link IngestService}; every other call is UNIMPLEMENTED. For benchmarks,
 * tests and embedding; the server composes its own producer that delegates the same way.
 */
public class IngestFlightProducer extends NoOpFlightSqlProducer {
  private final IngestService service;

  public IngestFlightProducer(IngestService service) {
    this.service = service;
  }

  @Override
  public Runnable acceptPut(CallContext context, FlightStream stream,
      StreamListener<PutResult> ackStream) {
    if (IngestService.isNativeIngest(stream.getDescriptor())) {
      return service.acceptPut(context, stream, ackStream);
    }
    return super.acceptPut(context, stream, ackStream);
  }

  @Override
  public Runnable acceptPutStatementBulkIngest(CommandStatementIngest command, CallContext context,
      FlightStream stream, StreamListener<PutResult> ackStream) {
    return service.acceptBulkIngest(command, context, stream, ackStream);
  }
}
