package io.storageengine.ingest;

import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.sql.NoOpFlightSqlProducer;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;

/**
 * A Flight (SQL) producer for a service that serves ingestion only: every call is UNIMPLEMENTED.
 * Ingest streams (native and Flight SQL bulk ingest) never reach a producer: host it with
 * {@link IngestService#flightService}, whose DoPut serves them. For benchmarks, tests and
 * embedding.
 */
public class IngestFlightProducer extends NoOpFlightSqlProducer {
  @Override
  public Runnable acceptPut(CallContext context, FlightStream stream,
      StreamListener<PutResult> ackStream) {
    if (IngestService.isNativeIngest(stream.getDescriptor())) {
      return () -> ackStream.onError(notServed("native ingest"));
    }
    return super.acceptPut(context, stream, ackStream);
  }

  @Override
  public Runnable acceptPutStatementBulkIngest(CommandStatementIngest command, CallContext context,
      FlightStream stream, StreamListener<PutResult> ackStream) {
    return () -> ackStream.onError(notServed("bulk ingest"));
  }

  /** An ingest stream that reached a producer: the Flight service was built without ingestion. */
  public static RuntimeException notServed(String what) {
    return CallStatus.INTERNAL.withDescription(what + " is served by IngestService#serveDoPut, "
        + "which this Flight service was built without").toRuntimeException();
  }
}
