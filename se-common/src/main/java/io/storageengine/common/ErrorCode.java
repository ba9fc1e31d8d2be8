package io.storageengine.common;

/**
 * The one error vocabulary of the engine. Each code has a stable name, a category, an HTTP
 * status and the Arrow Flight status it maps to. Protocol layers map codes through these fields
 * only ({@link HttpErrors}, {@link FlightErrors}), never by inspecting messages.
 */
public enum ErrorCode {
  INVALID_ARGUMENT(Category.USER, 400, FlightStatus.INVALID_ARGUMENT),
  INVALID_JSON(Category.USER, 400, FlightStatus.INVALID_ARGUMENT),
  UNPROCESSABLE(Category.USER, 422, FlightStatus.INVALID_ARGUMENT),
  UNSUPPORTED_MEDIA_TYPE(Category.USER, 415, FlightStatus.INVALID_ARGUMENT),
  METHOD_NOT_ALLOWED(Category.USER, 405, FlightStatus.UNIMPLEMENTED),
  /** The operation or feature exists in the protocol but the engine does not offer it. */
  UNSUPPORTED(Category.USER, 400, FlightStatus.UNIMPLEMENTED),
  /** The caller is not authenticated (an upstream catalog refused the credentials). */
  UNAUTHENTICATED(Category.USER, 401, FlightStatus.UNAUTHENTICATED),
  /** The caller may not do this, whoever it is (e.g. an outside data commit to an entity table). */
  FORBIDDEN(Category.USER, 403, FlightStatus.UNAUTHORIZED),
  NOT_FOUND(Category.NOT_FOUND, 404, FlightStatus.NOT_FOUND),
  ALREADY_EXISTS(Category.CONFLICT, 409, FlightStatus.ALREADY_EXISTS),
  /**
   * A concurrent change won (a commit lost its race, a lease moved on). Flight has no ABORTED
   * status (Arrow maps gRPC's ABORTED to INTERNAL as well), so Flight callers see INTERNAL with
   * the conflict's message.
   */
  CONFLICT(Category.CONFLICT, 409, FlightStatus.INTERNAL),
  RESOURCE_EXHAUSTED(Category.UNAVAILABLE, 429, FlightStatus.RESOURCE_EXHAUSTED),
  UNAVAILABLE(Category.UNAVAILABLE, 503, FlightStatus.UNAVAILABLE),
  /**
   * The request ran past a time limit of the server (a query's {@code query.timeout}); the
   * caller's own deadline is {@link #CANCELLED}.
   */
  TIMED_OUT(Category.USER, 504, FlightStatus.TIMED_OUT),
  /** The caller gave up on the request (cancelled it, its deadline passed, it disconnected). */
  CANCELLED(Category.USER, 499, FlightStatus.CANCELLED),
  INTERNAL(Category.INTERNAL, 500, FlightStatus.INTERNAL);

  /** Who has to act: the caller (user), nobody (not found / conflict), or the operator. */
  public enum Category { USER, NOT_FOUND, CONFLICT, UNAVAILABLE, INTERNAL }

  /**
   * The Arrow Flight status codes the engine answers with, named as in Arrow's
   * {@code FlightStatusCode} (the gRPC code each stands for is Arrow's mapping). Kept here so that
   * the vocabulary needs no Flight dependency; {@link FlightErrors} turns them into Flight statuses.
   */
  public enum FlightStatus {
    INVALID_ARGUMENT, UNIMPLEMENTED, UNAUTHENTICATED, UNAUTHORIZED, NOT_FOUND, ALREADY_EXISTS,
    RESOURCE_EXHAUSTED, UNAVAILABLE, TIMED_OUT, CANCELLED, INTERNAL
  }

  private final Category category;
  private final int httpStatus;
  private final FlightStatus flightStatus;

  ErrorCode(Category category, int httpStatus, FlightStatus flightStatus) {
    this.category = category;
    this.httpStatus = httpStatus;
    this.flightStatus = flightStatus;
  }

  public Category category() { return category; }

  /** The HTTP status of a response carrying this code. */
  public int httpStatus() { return httpStatus; }

  /** The Arrow Flight status of a call failing with this code. */
  public FlightStatus flightStatus() { return flightStatus; }

  /** True when the same request may succeed if retried later. */
  public boolean retryable() { return category == Category.UNAVAILABLE; }

  /** True when a client may see the message of an error with this code (all but INTERNAL). */
  public boolean messageIsPublic() { return category != Category.INTERNAL; }
}
