package io.storageengine.common;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The HTTP rendering of a {@link ClientError}: the status of its {@link ErrorCode} and a JSON
 * body, in one of two error models. Transport-neutral (status and bytes), so every HTTP service
 * writes the same answer with its own server library.
 * <ul>
 *   <li>{@linkplain #engine The engine's}: {@code {"error":{"code":"NOT_FOUND","message":".."}}},
 *       for the catalog API and the broker.</li>
 *   <li>{@linkplain #iceberg Iceberg REST's}: {@code {"error":{"message":"..","type":"..","code":404}}},
 *       for each tenant's Iceberg REST base URI. {@code type} is what Iceberg's client turns into
 *       an exception; UNSUPPORTED answers 406, the status that client raises
 *       {@code UnsupportedOperationException} for.</li>
 * </ul>
 */
public final class HttpErrors {
  private HttpErrors() {}

  /** An HTTP error response: status and a JSON body. */
  public record HttpError(int status, byte[] body) {}

  /** {@code error} in the engine's error model. */
  public static HttpError engine(Throwable error) {
    return engine(ClientError.of(error));
  }

  /** {@code error} in the engine's error model. */
  public static HttpError engine(ClientError error) {
    ObjectNode body = Json.object();
    ObjectNode inner = body.putObject("error");
    inner.put("code", error.code().name());
    inner.put("message", error.message());
    return new HttpError(error.code().httpStatus(), Json.toBytes(body));
  }

  /** {@code error} in the Iceberg REST error model. */
  public static HttpError iceberg(Throwable error) {
    return iceberg(ClientError.of(error));
  }

  /** {@code error} in the Iceberg REST error model. */
  public static HttpError iceberg(ClientError error) {
    int status = icebergStatus(error.code());
    ObjectNode body = Json.object();
    ObjectNode inner = body.putObject("error");
    inner.put("message", error.message());
    inner.put("type", error.type() != null ? error.type() : icebergType(error.code()));
    inner.put("code", status);
    return new HttpError(status, Json.toBytes(body));
  }

  static int icebergStatus(ErrorCode code) {
    return code == ErrorCode.UNSUPPORTED ? 406 : code.httpStatus();
  }

  /** The Iceberg REST {@code type} of an engine error (one that is no Iceberg or JDK exception). */
  static String icebergType(ErrorCode code) {
    return switch (code) {
      case INVALID_ARGUMENT, INVALID_JSON, UNPROCESSABLE, UNSUPPORTED_MEDIA_TYPE, CANCELLED -> "BadRequestException";
      case METHOD_NOT_ALLOWED -> "MethodNotAllowedException";
      case UNSUPPORTED -> "UnsupportedOperationException";
      case UNAUTHENTICATED -> "NotAuthorizedException";
      case FORBIDDEN -> "ForbiddenException";
      case NOT_FOUND -> "NoSuchCatalogException";
      case ALREADY_EXISTS, CONFLICT -> "AlreadyExistsException";
      case RESOURCE_EXHAUSTED, UNAVAILABLE, TIMED_OUT -> "ServiceUnavailableException";
      case INTERNAL -> "InternalServerError";
    };
  }
}
