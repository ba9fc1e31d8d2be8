package io.storageengine.ingest;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.OutOfMemoryException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where ingestion failures become Flight statuses: every exception is first
 * classified as an {@link ErrorCode}, whose {@link ErrorCode#grpcStatus()} names the status.
 * Messages of {@link SeException}s are safe for clients; anything else is logged here and
 * reported with a generic message so that no stack trace or backend detail leaks.
 */
public final class FlightErrors {
  private static final Logger LOG = LoggerFactory.getLogger(FlightErrors.class);

  private FlightErrors() {}

  /** The Flight status for {@code error}. */
  public static CallStatus toStatus(Throwable error) {
    SeException se = toSeException(error);
    if (se == null) {
      // Already a Flight status (e.g. the client cancelled): pass it through unchanged.
      return ((FlightRuntimeException) unwrap(error)).status();
    }
    FlightStatusCode code = FlightStatusCode.valueOf(se.code().grpcStatus());
    return new CallStatus(code, null, se.getMessage(), null);
  }

  /** {@link #toStatus} as an exception for {@code StreamListener.onError}. */
  public static FlightRuntimeException toFlightException(Throwable error) {
    return toStatus(error).toRuntimeException();
  }

  /**
   * Classifies {@code error}: an {@link SeException} keeps its code, Arrow memory limits are
   * RESOURCE_EXHAUSTED, anything unexpected is INTERNAL. Returns null for Flight statuses.
   */
  static SeException toSeException(Throwable error) {
    Throwable t = unwrap(error);
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof SeException se) {
        return se;
      }
      if (c instanceof OutOfMemoryException) {
        return new SeException(ErrorCode.RESOURCE_EXHAUSTED,
            "stream memory limit exceeded while converting a batch: send smaller batches");
      }
    }
    if (t instanceof FlightRuntimeException) {
      return null;
    }
    LOG.error("unexpected ingestion failure", t);
    return new SeException(ErrorCode.INTERNAL, "internal error during ingestion");
  }

  private static Throwable unwrap(Throwable t) {
    Throwable c = t;
    while ((c instanceof java.util.concurrent.CompletionException
        || c instanceof java.util.concurrent.ExecutionException) && c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }
}
