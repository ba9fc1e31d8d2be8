package io.storageengine.common;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.stream.Stream;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchIcebergTableException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchPlanIdException;
import org.apache.iceberg.exceptions.NoSuchPlanTaskException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.exceptions.ServiceUnavailableException;
import org.apache.iceberg.exceptions.ValidationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Pins the one error mapping: every {@link ErrorCode} to its Flight status and HTTP statuses, and
 * every throwable the classification knows to its code, status and message.
 */
class ErrorMappingTest {

  /** code, category, engine HTTP status, Flight status, Iceberg REST status, Iceberg REST type. */
  static Stream<Arguments> codes() {
    return Stream.of(
        Arguments.of(ErrorCode.INVALID_ARGUMENT, ErrorCode.Category.USER, 400, FlightStatusCode.INVALID_ARGUMENT, 400, "BadRequestException"),
        Arguments.of(ErrorCode.INVALID_JSON, ErrorCode.Category.USER, 400, FlightStatusCode.INVALID_ARGUMENT, 400, "BadRequestException"),
        Arguments.of(ErrorCode.UNPROCESSABLE, ErrorCode.Category.USER, 422, FlightStatusCode.INVALID_ARGUMENT, 422, "BadRequestException"),
        Arguments.of(ErrorCode.UNSUPPORTED_MEDIA_TYPE, ErrorCode.Category.USER, 415, FlightStatusCode.INVALID_ARGUMENT, 415, "BadRequestException"),
        Arguments.of(ErrorCode.METHOD_NOT_ALLOWED, ErrorCode.Category.USER, 405, FlightStatusCode.UNIMPLEMENTED, 405, "MethodNotAllowedException"),
        Arguments.of(ErrorCode.UNSUPPORTED, ErrorCode.Category.USER, 400, FlightStatusCode.UNIMPLEMENTED, 406, "UnsupportedOperationException"),
        Arguments.of(ErrorCode.UNAUTHENTICATED, ErrorCode.Category.USER, 401, FlightStatusCode.UNAUTHENTICATED, 401, "NotAuthorizedException"),
        Arguments.of(ErrorCode.FORBIDDEN, ErrorCode.Category.USER, 403, FlightStatusCode.UNAUTHORIZED, 403, "ForbiddenException"),
        Arguments.of(ErrorCode.NOT_FOUND, ErrorCode.Category.NOT_FOUND, 404, FlightStatusCode.NOT_FOUND, 404, "NoSuchCatalogException"),
        Arguments.of(ErrorCode.ALREADY_EXISTS, ErrorCode.Category.CONFLICT, 409, FlightStatusCode.ALREADY_EXISTS, 409, "AlreadyExistsException"),
        Arguments.of(ErrorCode.CONFLICT, ErrorCode.Category.CONFLICT, 409, FlightStatusCode.INTERNAL, 409, "AlreadyExistsException"),
        Arguments.of(ErrorCode.RESOURCE_EXHAUSTED, ErrorCode.Category.UNAVAILABLE, 429, FlightStatusCode.RESOURCE_EXHAUSTED, 429, "ServiceUnavailableException"),
        Arguments.of(ErrorCode.UNAVAILABLE, ErrorCode.Category.UNAVAILABLE, 503, FlightStatusCode.UNAVAILABLE, 503, "ServiceUnavailableException"),
        Arguments.of(ErrorCode.TIMED_OUT, ErrorCode.Category.USER, 504, FlightStatusCode.TIMED_OUT, 504, "ServiceUnavailableException"),
        Arguments.of(ErrorCode.CANCELLED, ErrorCode.Category.USER, 499, FlightStatusCode.CANCELLED, 499, "BadRequestException"),
        Arguments.of(ErrorCode.INTERNAL, ErrorCode.Category.INTERNAL, 500, FlightStatusCode.INTERNAL, 500, "InternalServerError"));
  }

  @Test
  void everyCodeIsPinned() {
    assertThat(codes().map(a -> a.get()[0])).containsExactlyInAnyOrder((Object[]) ErrorCode.values());
  }

  @ParameterizedTest
  @MethodSource("codes")
  void codeMapsToItsStatuses(ErrorCode code, ErrorCode.Category category, int http, FlightStatusCode flight,
      int icebergStatus, String icebergType) {
    assertThat(code.category()).isEqualTo(category);
    SeException error = new SeException(code, "message of " + code);
    boolean shown = category != ErrorCode.Category.INTERNAL;

    CallStatus status = FlightErrors.toStatus(error);
    assertThat(status.code()).isEqualTo(flight);
    assertMessage(status.description(), "message of " + code, shown);

    HttpErrors.HttpError engine = HttpErrors.engine(error);
    assertThat(engine.status()).isEqualTo(http);
    JsonNode body = Json.parse(engine.body()).get("error");
    assertThat(body.get("code").asText()).isEqualTo(code.name());
    assertMessage(body.get("message").asText(), "message of " + code, shown);

    HttpErrors.HttpError iceberg = HttpErrors.iceberg(error);
    assertThat(iceberg.status()).isEqualTo(icebergStatus);
    JsonNode rest = Json.parse(iceberg.body()).get("error");
    assertThat(rest.get("code").asInt()).isEqualTo(icebergStatus);
    assertThat(rest.get("type").asText()).isEqualTo(icebergType);
    assertMessage(rest.get("message").asText(), "message of " + code, shown);
  }

  /** throwable, code, Flight status, engine HTTP status, Iceberg REST type, message shown (null: hidden). */
  static Stream<Arguments> throwables() {
    return Stream.of(
        Arguments.of(new NoSuchTableException("Table does not exist: a.t"), ErrorCode.NOT_FOUND, FlightStatusCode.NOT_FOUND, 404,
            "NoSuchTableException", "Table does not exist: a.t"),
        Arguments.of(new NoSuchIcebergTableException("Not an iceberg table: a.t"), ErrorCode.NOT_FOUND, FlightStatusCode.NOT_FOUND, 404,
            "NoSuchTableException", "Not an iceberg table: a.t"),
        Arguments.of(new NoSuchNamespaceException("Namespace does not exist: a"), ErrorCode.NOT_FOUND, FlightStatusCode.NOT_FOUND, 404,
            "NoSuchNamespaceException", "Namespace does not exist: a"),
        Arguments.of(new NoSuchViewException("View does not exist: a.v"), ErrorCode.NOT_FOUND, FlightStatusCode.NOT_FOUND, 404,
            "NoSuchViewException", "View does not exist: a.v"),
        Arguments.of(new NotFoundException("Failed to open input stream for file: m.json"), ErrorCode.NOT_FOUND,
            FlightStatusCode.NOT_FOUND, 404, "NotFoundException", "Failed to open input stream for file: m.json"),
        Arguments.of(new NoSuchPlanIdException("no plan 'p1' for table a.t on this server"), ErrorCode.NOT_FOUND,
            FlightStatusCode.NOT_FOUND, 404, "NoSuchPlanIdException", "no plan 'p1' for table a.t on this server"),
        Arguments.of(new NoSuchPlanTaskException("invalid plan task"), ErrorCode.NOT_FOUND,
            FlightStatusCode.NOT_FOUND, 404, "NoSuchPlanTaskException", "invalid plan task"),
        Arguments.of(new AlreadyExistsException("Table already exists: a.t"), ErrorCode.ALREADY_EXISTS,
            FlightStatusCode.ALREADY_EXISTS, 409, "AlreadyExistsException", "Table already exists: a.t"),
        Arguments.of(new CommitFailedException("Requirement failed: branch main has changed"), ErrorCode.CONFLICT,
            FlightStatusCode.INTERNAL, 409, "CommitFailedException", "Requirement failed: branch main has changed"),
        Arguments.of(new NamespaceNotEmptyException("Namespace a is not empty"), ErrorCode.CONFLICT, FlightStatusCode.INTERNAL, 409,
            "NamespaceNotEmptyException", "Namespace a is not empty"),
        Arguments.of(new ForbiddenException("table a.t is an entity table"), ErrorCode.FORBIDDEN, FlightStatusCode.UNAUTHORIZED, 403,
            "ForbiddenException", "table a.t is an entity table"),
        Arguments.of(new NotAuthorizedException("Not authorized: token expired"), ErrorCode.UNAUTHENTICATED,
            FlightStatusCode.UNAUTHENTICATED, 401, "NotAuthorizedException", "Not authorized: token expired"),
        Arguments.of(new ServiceUnavailableException("upstream is down"), ErrorCode.UNAVAILABLE, FlightStatusCode.UNAVAILABLE, 503,
            "ServiceUnavailableException", "upstream is down"),
        Arguments.of(new BadRequestException("invalid snapshots 'x'"), ErrorCode.INVALID_ARGUMENT, FlightStatusCode.INVALID_ARGUMENT,
            400, "BadRequestException", "invalid snapshots 'x'"),
        Arguments.of(new ValidationException("Cannot add column: first line\nsecond line"), ErrorCode.INVALID_ARGUMENT,
            FlightStatusCode.INVALID_ARGUMENT, 400, "ValidationException", "Cannot add column: first line"),
        Arguments.of(new IllegalArgumentException("Invalid table name: a b"), ErrorCode.INVALID_ARGUMENT,
            FlightStatusCode.INVALID_ARGUMENT, 400, "IllegalArgumentException", "Invalid table name: a b"),
        Arguments.of(new NumberFormatException("For input string: \"x\""), ErrorCode.INVALID_ARGUMENT,
            FlightStatusCode.INVALID_ARGUMENT, 400, "IllegalArgumentException", "For input string: \"x\""),
        Arguments.of(new UnsupportedOperationException("Views are not supported"), ErrorCode.UNSUPPORTED,
            FlightStatusCode.UNIMPLEMENTED, 400, "UnsupportedOperationException", "Views are not supported"),
        Arguments.of(new UnsupportedOperationException(), ErrorCode.UNSUPPORTED,
            FlightStatusCode.UNIMPLEMENTED, 400, "UnsupportedOperationException", "UnsupportedOperationException"),
        Arguments.of(new CommitStateUnknownException(new RuntimeException("s3 timeout at bucket/secret-key")),
            ErrorCode.INTERNAL, FlightStatusCode.INTERNAL, 500, "CommitStateUnknownException", null),
        Arguments.of(new OutOfMemoryException("Unable to allocate buffer of size 1048576 due to memory limit"),
            ErrorCode.RESOURCE_EXHAUSTED, FlightStatusCode.RESOURCE_EXHAUSTED, 429, "ServiceUnavailableException",
            ClientError.MEMORY_LIMIT_MESSAGE),
        Arguments.of(new RuntimeException("converting batch", new OutOfMemoryException("limit")),
            ErrorCode.RESOURCE_EXHAUSTED, FlightStatusCode.RESOURCE_EXHAUSTED, 429, "ServiceUnavailableException",
            ClientError.MEMORY_LIMIT_MESSAGE),
        Arguments.of(new OutOfMemoryError("Java heap space"), ErrorCode.RESOURCE_EXHAUSTED, FlightStatusCode.RESOURCE_EXHAUSTED,
            429, "ServiceUnavailableException", ClientError.MEMORY_LIMIT_MESSAGE),
        Arguments.of(new CompletionException(SeException.notFound("table `t` not found")), ErrorCode.NOT_FOUND,
            FlightStatusCode.NOT_FOUND, 404, "NoSuchCatalogException", "table `t` not found"),
        Arguments.of(new ExecutionException(new CompletionException(new NoSuchTableException("Table does not exist: t"))),
            ErrorCode.NOT_FOUND, FlightStatusCode.NOT_FOUND, 404, "NoSuchTableException", "Table does not exist: t"),
        Arguments.of(new IllegalStateException("wrapped", SeException.invalid("column `x`: bad")), ErrorCode.INVALID_ARGUMENT,
            FlightStatusCode.INVALID_ARGUMENT, 400, "BadRequestException", "column `x`: bad"),
        Arguments.of(SeException.internal("secret detail /home/me/.se", new RuntimeException("boom")), ErrorCode.INTERNAL,
            FlightStatusCode.INTERNAL, 500, "InternalServerError", null),
        Arguments.of(new IllegalStateException("secret detail /home/me/.se"), ErrorCode.INTERNAL, FlightStatusCode.INTERNAL, 500,
            "InternalServerError", null),
        Arguments.of(new NullPointerException(), ErrorCode.INTERNAL, FlightStatusCode.INTERNAL, 500, "InternalServerError", null));
  }

  @Test
  void everyKnownTypeIsARealClassAndPinned() throws Exception {
    List<String> pinned = throwables().map(a -> ClientError.unwrap((Throwable) a.get()[0]).getClass())
        .flatMap(c -> Stream.<Class<?>>iterate(c, k -> k != null, Class::getSuperclass)).map(Class::getName).toList();
    for (String name : ClientError.KNOWN_TYPES.keySet()) {
      assertThat(Throwable.class.isAssignableFrom(Class.forName(name))).as(name).isTrue();
      assertThat(pinned).as(name).contains(name);
    }
    assertThat(OutOfMemoryException.class.getName()).isEqualTo(ClientError.ARROW_OUT_OF_MEMORY);
  }

  @ParameterizedTest
  @MethodSource("throwables")
  void throwableMapsToItsCodeAndStatuses(Throwable error, ErrorCode code, FlightStatusCode flight, int http,
      String icebergType, String message) {
    ClientError classified = ClientError.of(error);
    assertThat(classified.code()).isEqualTo(code);
    assertThat(classified.code().httpStatus()).isEqualTo(http);
    if (message != null) {
      assertThat(classified.message()).isEqualTo(message);
      assertThat(classified.errorId()).isNull();
    } else {
      assertThat(classified.message()).matches("(internal error|commit state unknown) \\(error id [0-9a-f]{12}\\): see the server log");
      assertThat(classified.errorId()).isNotNull();
    }
    assertThat(FlightErrors.toStatus(error).code()).isEqualTo(flight);
    assertThat(HttpErrors.engine(error).status()).isEqualTo(http);
    assertThat(Json.parse(HttpErrors.iceberg(error).body()).get("error").get("type").asText()).isEqualTo(icebergType);
  }

  @Test
  void internalErrorsGetAFreshIdAndHideTheirMessage() {
    RuntimeException error = new IllegalStateException("secret detail");
    ClientError first = ClientError.of(error);
    ClientError second = ClientError.of(error);
    assertThat(first.errorId()).isNotEqualTo(second.errorId());
    assertThat(first.message()).contains(first.errorId()).doesNotContain("secret");
    assertThat(FlightErrors.toStatus(error).description()).doesNotContain("secret");
    assertThat(new String(HttpErrors.engine(error).body(), java.nio.charset.StandardCharsets.UTF_8)).doesNotContain("secret");
  }

  @Test
  void flightStatusesPassThroughUnchanged() {
    FlightRuntimeException cancelled = CallStatus.CANCELLED.withDescription("gone").toRuntimeException();
    assertThat(FlightErrors.toException(cancelled)).isSameAs(cancelled);
    assertThat(FlightErrors.toStatus(new CompletionException(cancelled)).code()).isEqualTo(FlightStatusCode.CANCELLED);
    assertThat(FlightErrors.toStatus(cancelled).description()).isEqualTo("gone");
  }

  @Test
  void grpcStatusCarriesTheCodeAndMessage() {
    io.grpc.Status status = FlightErrors.toGrpcStatus(SeException.invalid("DoPut: bad descriptor"));
    assertThat(status.getCode()).isEqualTo(io.grpc.Status.Code.INVALID_ARGUMENT);
    assertThat(status.getDescription()).isEqualTo("DoPut: bad descriptor");
  }

  @Test
  void everyFlightStatusHasAFlightCode() {
    assertThat(Arrays.stream(ErrorCode.FlightStatus.values()).map(FlightErrors::flightCode).map(Enum::name))
        .containsExactly(Arrays.stream(ErrorCode.FlightStatus.values()).map(Enum::name).toArray(String[]::new));
  }

  private static void assertMessage(String actual, String original, boolean shown) {
    if (shown) {
      assertThat(actual).isEqualTo(original);
    } else {
      assertThat(actual).doesNotContain(original).matches("internal error \\(error id [0-9a-f]{12}\\): see the server log");
    }
  }
}
