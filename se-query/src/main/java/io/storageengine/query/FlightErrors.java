package io.storageengine.query;

import io.storageengine.common.SeException;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Maps the engine's errors to Flight statuses through {@link io.storageengine.common.ErrorCode#grpcStatus()}. */
public final class FlightErrors {
  private static final Logger LOG = LoggerFactory.getLogger(FlightErrors.class);

  private FlightErrors() {}

  /** The Flight exception to report {@code error} to a client. */
  public static FlightRuntimeException toFlight(Throwable error) {
    if (error instanceof FlightRuntimeException flight) {
      return flight;
    }
    for (Throwable cause = error; cause != null; cause = cause.getCause()) {
      if (cause instanceof SeException se) {
        FlightStatusCode code;
        try {
          code = FlightStatusCode.valueOf(se.code().grpcStatus());
        } catch (IllegalArgumentException e) {
          code = se.code().retryable() ? FlightStatusCode.UNAVAILABLE : FlightStatusCode.INTERNAL;
        }
        if (code == FlightStatusCode.INTERNAL) {
          LOG.warn("query failed: {}", se.getMessage(), se);
        }
        return new CallStatus(code, null, se.getMessage(), null).toRuntimeException();
      }
    }
    LOG.error("query failed unexpectedly", error);
    return CallStatus.INTERNAL.withDescription("internal error").toRuntimeException();
  }
}
