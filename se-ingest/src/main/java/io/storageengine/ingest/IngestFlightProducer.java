package io.storageengine.ingest;

import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.sql.NoOpFlightSqlProducer;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;

/**
 * A Flight (SQL) producer that serves ingestion only: Flight SQL bulk ingest goes to the
 * {@link IngestService}; every other call is UNIMPLEMENTED. Native ingest streams never reach a
 * producer: host it with {@link IngestService#flightService}, whose DoPut serves them. For
 * benchmarks, tests and embedding; the server composes its own producer that delegates the same
 * way.
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
      return () -> ackStream.onError(CallStatus.INTERNAL.withDescription("native ingest is "
          + "served by IngestService#serveDoPut, which this Flight service was built without")
          .toRuntimeException());
    }
    return super.acceptPut(context, stream, ackStream);
  }

  @Override
  public Runnable acceptPutStatementBulkIngest(CommandStatementIngest command, CallContext context,
      FlightStream stream, StreamListener<PutResult> ackStream) {
    return service.acceptBulkIngest(command, context, stream, ackStream);
  }
}
