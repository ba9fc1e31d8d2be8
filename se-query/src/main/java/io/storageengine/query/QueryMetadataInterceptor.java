package io.storageengine.query;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;

/**
 * Carries the query layer's per-call inputs from gRPC headers into an {@link io.grpc.Context}:
 * the {@code se-query-metadata} header (tenant selection) and the Flight SQL session cookie.
 *
 * <p>Flight services built with {@code FlightGrpcUtils.createFlightService} cannot use Flight
 * middleware, so this plain gRPC interceptor does the job. Producer methods that Flight runs on
 * its executor see the context only when that executor is wrapped with
 * {@link Context#currentContextExecutor}. When the server issues a session during a call, the
 * interceptor returns it in a {@code set-cookie} response header, which Flight clients with a
 * cookie middleware (the Flight SQL JDBC driver does) send back on later calls.
 */
public final class QueryMetadataInterceptor implements ServerInterceptor {
  /** Header naming the tenant: {@code {"catalog_id":"warehouse"}}. */
  public static final String HEADER_NAME = "se-query-metadata";
  /** Cookie that identifies a Flight SQL session (the name Arrow's own session middleware uses). */
  public static final String SESSION_COOKIE = "arrow_flight_session_id";

  static final Metadata.Key<String> HEADER = Metadata.Key.of(HEADER_NAME, Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> COOKIE = Metadata.Key.of("cookie", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> SET_COOKIE = Metadata.Key.of("set-cookie", Metadata.ASCII_STRING_MARSHALLER);
  private static final Context.Key<QueryCallContext> CALL = Context.key("se-query-call");

  /** The current call's context; {@link QueryCallContext#EMPTY} outside an intercepted call. */
  public static QueryCallContext current() {
    QueryCallContext call = CALL.get();
    return call == null ? QueryCallContext.EMPTY : call;
  }

  /** A context carrying {@code call}, for hosts that call the producer without gRPC headers. */
  public static Context withCall(QueryCallContext call) {
    return Context.current().withValue(CALL, call);
  }

  @Override
  public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
      ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
    QueryCallContext context = QueryCallContext.fromHeaderValues(headers.getAll(HEADER), sessionCookie(headers));
    ServerCall<ReqT, RespT> withCookie = new SimpleForwardingServerCall<>(call) {
      @Override
      public void sendHeaders(Metadata responseHeaders) {
        context.issuedSessionId().ifPresent(id -> responseHeaders.put(SET_COOKIE, SESSION_COOKIE + "=" + id));
        super.sendHeaders(responseHeaders);
      }
    };
    return Contexts.interceptCall(Context.current().withValue(CALL, context), withCookie, headers, next);
  }

  private static String sessionCookie(Metadata headers) {
    Iterable<String> values = headers.getAll(COOKIE);
    if (values == null) {
      return null;
    }
    for (String value : values) {
      for (String part : value.split(";")) {
        String trimmed = part.trim();
        int eq = trimmed.indexOf('=');
        if (eq > 0 && trimmed.substring(0, eq).trim().equals(SESSION_COOKIE)) {
          String id = trimmed.substring(eq + 1).trim();
          return id.isEmpty() ? null : id;
        }
      }
    }
    return null;
  }
}
