package io.storageengine.common;

import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.grpc.StatusUtils;

/**
 * The Arrow Flight rendering of a {@link ClientError}: the Flight status of its {@link ErrorCode}
 * with the client message as description. A Flight status that is already one (the client
 * cancelled, a lower layer chose the status) passes through unchanged.
 *
 * <p>Needs {@code flight-core}, an optional dependency of se-common: only modules that speak
 * Flight (and so have it) may call this class.
 */
public final class FlightErrors {
  private FlightErrors() {}

  /** The Flight status to report {@code error} with. */
  public static CallStatus toStatus(Throwable error) {
    Throwable t = ClientError.unwrap(error);
    if (t instanceof FlightRuntimeException flight) {
      return flight.status();
    }
    return toStatus(ClientError.of(t));
  }

  /** The Flight status of a classified error. */
  public static CallStatus toStatus(ClientError error) {
    return new CallStatus(flightCode(error.code().flightStatus()), null, error.message(), null);
  }

  /** {@link #toStatus} as an exception to throw or hand to a listener's {@code onError}. */
  public static FlightRuntimeException toException(Throwable error) {
    Throwable t = ClientError.unwrap(error);
    if (t instanceof FlightRuntimeException flight) {
      return flight;
    }
    return toStatus(ClientError.of(t)).toRuntimeException();
  }

  /** {@link #toStatus} as a gRPC status, for layers below Flight (server interceptors). */
  public static io.grpc.Status toGrpcStatus(Throwable error) {
    return StatusUtils.toGrpcStatus(toStatus(error));
  }

  static FlightStatusCode flightCode(ErrorCode.FlightStatus status) {
    return switch (status) {
      case INVALID_ARGUMENT -> FlightStatusCode.INVALID_ARGUMENT;
      case UNIMPLEMENTED -> FlightStatusCode.UNIMPLEMENTED;
      case UNAUTHENTICATED -> FlightStatusCode.UNAUTHENTICATED;
      case UNAUTHORIZED -> FlightStatusCode.UNAUTHORIZED;
      case NOT_FOUND -> FlightStatusCode.NOT_FOUND;
      case ALREADY_EXISTS -> FlightStatusCode.ALREADY_EXISTS;
      case RESOURCE_EXHAUSTED -> FlightStatusCode.RESOURCE_EXHAUSTED;
      case UNAVAILABLE -> FlightStatusCode.UNAVAILABLE;
      case TIMED_OUT -> FlightStatusCode.TIMED_OUT;
      case CANCELLED -> FlightStatusCode.CANCELLED;
      case INTERNAL -> FlightStatusCode.INTERNAL;
    };
  }
}
