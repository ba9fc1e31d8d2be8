package io.storageengine.ingest;

import io.storageengine.common.FlightErrors;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.sql.NoOpFlightSqlProducer;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;

/**
 * A Flight (SQL) producer for a service that serves ingestion only: the {@link ProducerState}
 * action when built with the service, every other call UNIMPLEMENTED. Ingest streams (native
 * and Flight SQL bulk ingest) never reach a producer: host it with
 * {@link IngestService#flightService}, whose DoPut serves them. For benchmarks, tests and
 * embedding.
 */
public class IngestFlightProducer extends NoOpFlightSqlProducer {
  private final IngestService service;

  /** Serves no action. */
  public IngestFlightProducer() {
    this(null);
  }

  /** Serves the {@link ProducerState} action of {@code service} (null: none). */
  public IngestFlightProducer(IngestService service) {
    this.service = service;
  }

  @Override
  public Runnable acceptPut(CallContext context, FlightStream stream,
      StreamListener<PutResult> ackStream) {
    if (IngestService.isNativeIngest(stream.getDescriptor())) {
      return () -> ackStream.onError(notServed("native ingest"));
    }
    return super.acceptPut(context, stream, ackStream);
  }

  @Override
  public void doAction(CallContext context, Action action, StreamListener<Result> listener) {
    if (service != null && isProducerState(action)) {
      serveProducerState(service, action, listener);
      return;
    }
    super.doAction(context, action, listener);
  }

  @Override
  public Runnable acceptPutStatementBulkIngest(CommandStatementIngest command, CallContext context,
      FlightStream stream, StreamListener<PutResult> ackStream) {
    return () -> ackStream.onError(notServed("bulk ingest"));
  }

  /** True for the {@link ProducerState#ACTION} action. */
  public static boolean isProducerState(Action action) {
    return ProducerState.ACTION.equals(action.getType());
  }

  /**
   * Answers a {@link ProducerState#ACTION} action with {@link IngestService#lastSequence}; a
   * failure ends the call with its Flight status.
   */
  public static void serveProducerState(IngestService service, Action action,
      StreamListener<Result> listener) {
    byte[] result;
    try {
      result = ProducerState.encodeResult(service.lastSequence(ProducerState.parseRequest(action.getBody())));
    } catch (RuntimeException e) {
      listener.onError(FlightErrors.toException(e));
      return;
    }
    listener.onNext(new Result(result));
    listener.onCompleted();
  }

  /** An ingest stream that reached a producer: the Flight service was built without ingestion. */
  public static RuntimeException notServed(String what) {
    return CallStatus.INTERNAL.withDescription(what + " is served by IngestService#serveDoPut, "
        + "which this Flight service was built without").toRuntimeException();
  }
}
