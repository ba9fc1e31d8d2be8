package io.storageengine.common;

/**
 * The one error vocabulary of the engine. Each code has a stable name, a category, an HTTP
 * status and the name of the gRPC / Arrow Flight status it maps to. Protocol layers map codes
 * through these fields only, never by inspecting messages.
 */
public enum ErrorCode {
  INVALID_ARGUMENT(Category.USER, 400, "INVALID_ARGUMENT"),
  INVALID_JSON(Category.USER, 400, "INVALID_ARGUMENT"),
  UNPROCESSABLE(Category.USER, 422, "INVALID_ARGUMENT"),
  UNSUPPORTED_MEDIA_TYPE(Category.USER, 415, "INVALID_ARGUMENT"),
  METHOD_NOT_ALLOWED(Category.USER, 405, "UNIMPLEMENTED"),
  UNSUPPORTED(Category.USER, 400, "UNIMPLEMENTED"),
  UNAUTHENTICATED(Category.USER, 401, "UNAUTHENTICATED"),
  PERMISSION_DENIED(Category.USER, 403, "PERMISSION_DENIED"),
  NOT_FOUND(Category.NOT_FOUND, 404, "NOT_FOUND"),
  ALREADY_EXISTS(Category.CONFLICT, 409, "ALREADY_EXISTS"),
  CONFLICT(Category.CONFLICT, 409, "ABORTED"),
  RESOURCE_EXHAUSTED(Category.UNAVAILABLE, 429, "RESOURCE_EXHAUSTED"),
  UNAVAILABLE(Category.UNAVAILABLE, 503, "UNAVAILABLE"),
  /** The caller gave up on the request (cancelled it, its deadline passed, it disconnected). */
  CANCELLED(Category.USER, 499, "CANCELLED"),
  INTERNAL(Category.INTERNAL, 500, "INTERNAL");

  /** Who has to act: the caller (user), nobody (not found / conflict), or the operator. */
  public enum Category { USER, NOT_FOUND, CONFLICT, UNAVAILABLE, INTERNAL }

  private final Category category;
  private final int httpStatus;
  private final String grpcStatus;

  ErrorCode(Category category, int httpStatus, String grpcStatus) {
    this.category = category;
    this.httpStatus = httpStatus;
    this.grpcStatus = grpcStatus;
  }

  public Category category() { return category; }

  public int httpStatus() { return httpStatus; }

  /** Name of the matching {@code io.grpc.Status.Code} / {@code FlightStatusCode}. */
  public String grpcStatus() { return grpcStatus; }

  /** True when the same request may succeed if retried later. */
  public boolean retryable() { return category == Category.UNAVAILABLE; }
}
