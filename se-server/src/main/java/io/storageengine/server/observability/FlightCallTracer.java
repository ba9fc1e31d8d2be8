package io.storageengine.server.observability;

import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.storageengine.common.telemetry.SpanFields;
import io.storageengine.common.telemetry.Telemetry;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Opens a span per Flight / Flight SQL call ({@code flight.<Method>}) and closes it when the
 * call closes, so a response stream keeps its span open until the stream ends; records the
 * call in the Flight and query metrics.
 *
 * <p>Span fields: method, kind (ingest, bulk_ingest, query, metadata, action, other), the
 * Flight SQL command type, the selected catalog, discovery filters, the query length, the
 * ingestion table, operation and request ids, request and response message counts, gRPC
 * status, error. Never the SQL text, tickets, headers or credentials. The span is current while
 * the call's handlers run (and, through {@link #propagating}, in the tasks Flight hands to its
 * executor), so catalog, WAL and storage spans nest under it. A W3C {@code traceparent} header
 * from the client makes the call part of the client's trace.
 */
public final class FlightCallTracer implements ServerInterceptor {
  /** Request ids kept on one span: enough to find a batch, bounded for long streams. */
  static final int MAX_REQUEST_IDS = 64;

  private static final Metadata.Key<String> QUERY_METADATA =
      Metadata.Key.of("se-query-metadata", Metadata.ASCII_STRING_MARSHALLER);
  private static final TextMapGetter<Metadata> HEADERS = new TextMapGetter<>() {
    @Override
    public Iterable<String> keys(Metadata carrier) {
      return carrier.keys();
    }

    @Override
    public String get(Metadata carrier, String key) {
      return carrier == null || key.endsWith(Metadata.BINARY_HEADER_SUFFIX)
          ? null : carrier.get(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER));
    }
  };

  private final Telemetry telemetry;

  public FlightCallTracer(Telemetry telemetry) {
    this.telemetry = telemetry;
  }

  /** An executor that runs each task in the OpenTelemetry context of the thread that submitted it. */
  public static java.util.concurrent.ExecutorService propagating(java.util.concurrent.ExecutorService executor) {
    return Context.taskWrapping(executor);
  }

  @Override
  public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
      ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
    Context parent = telemetry.openTelemetry().getPropagators().getTextMapPropagator()
        .extract(Context.root(), headers, HEADERS);
    FlightCall traced = new FlightCall(call.getMethodDescriptor().getBareMethodName(), parent,
        FlightRequests.headerCatalog(headers.get(QUERY_METADATA)));
    ServerCall<ReqT, RespT> counting = new SimpleForwardingServerCall<>(call) {
      @Override
      public void sendMessage(RespT message) {
        traced.responses.incrementAndGet();
        super.sendMessage(message);
      }

      @Override
      public void close(Status status, Metadata trailers) {
        try {
          super.close(status, trailers);
        } finally {
          traced.end(status);
        }
      }
    };
    ServerCall.Listener<ReqT> delegate;
    try (Scope ignored = traced.context.makeCurrent()) {
      delegate = next.startCall(counting, headers);
    } catch (RuntimeException | Error e) {
      traced.end(Status.fromThrowable(e));
      throw e;
    }
    return new SimpleForwardingServerCallListener<>(delegate) {
      @Override
      public void onMessage(ReqT message) {
        traced.request(message);
        try (Scope ignored = traced.context.makeCurrent()) {
          super.onMessage(message);
        }
      }

      @Override
      public void onHalfClose() {
        try (Scope ignored = traced.context.makeCurrent()) {
          super.onHalfClose();
        }
      }

      @Override
      public void onReady() {
        try (Scope ignored = traced.context.makeCurrent()) {
          super.onReady();
        }
      }

      @Override
      public void onCancel() {
        try (Scope ignored = traced.context.makeCurrent()) {
          super.onCancel();
        } finally {
          traced.end(Status.CANCELLED);
        }
      }
    };
  }

  /** The span and counters of one call. */
  private final class FlightCall {
    final String method;
    final Span span;
    final Context context;
    final long startNanos = System.nanoTime();
    final AtomicLong requests = new AtomicLong();
    final AtomicLong responses = new AtomicLong();
    final AtomicBoolean ended = new AtomicBoolean();
    final List<Long> requestIds = new ArrayList<>();
    long requestIdCount;
    volatile String kind;

    FlightCall(String method, Context parent, String headerCatalog) {
      this.method = method;
      this.kind = switch (method) {
        case "DoAction" -> "action";
        case "DoPut" -> "put";
        default -> "other";
      };
      this.span = telemetry.tracer().spanBuilder("flight." + method)
          .setParent(parent)
          .setSpanKind(SpanKind.SERVER)
          .setAttribute("rpc.system", "grpc")
          .setAttribute("rpc.service", "arrow.flight.protocol.FlightService")
          .setAttribute(SpanFields.RPC_METHOD, method)
          .startSpan();
      if (headerCatalog != null) {
        span.setAttribute(SpanFields.CATALOG_ID, headerCatalog);
      }
      this.context = parent.with(span);
    }

    void request(Object message) {
      long n = requests.incrementAndGet();
      if (!(message instanceof byte[] bytes)) {
        return;
      }
      boolean first = n == 1;
      FlightRequests.Facts facts;
      switch (method) {
        case "GetFlightInfo", "GetSchema", "PollFlightInfo" -> facts = first ? FlightRequests.descriptor(bytes, span) : null;
        case "DoGet" -> facts = first ? FlightRequests.ticket(bytes) : null;
        case "DoAction" -> facts = first ? FlightRequests.action(bytes, span) : null;
        // Later DoPut messages only carry request ids: read them only when the span records.
        case "DoPut" -> facts = first || span.isRecording() ? FlightRequests.flightData(bytes, first, span) : null;
        default -> facts = null;
      }
      if (facts == null) {
        return;
      }
      if (first) {
        kind = facts.kind;
        span.setAttribute(SpanFields.FLIGHT_KIND, facts.kind);
        if (facts.command != null) {
          span.setAttribute(SpanFields.FLIGHT_COMMAND, facts.command);
        }
      }
      // The native protocol's target may come with the schema or in a metadata-only message.
      if (facts.catalogId != null) {
        span.setAttribute(SpanFields.CATALOG_ID, facts.catalogId);
      }
      if (facts.table != null) {
        span.setAttribute(SpanFields.TABLE, facts.table);
      }
      if (facts.operation != null) {
        span.setAttribute(SpanFields.INGEST_OPERATION, facts.operation);
      }
      // Request id 0 only acknowledges the target; batches are numbered from 1.
      if (facts.requestId != null && facts.requestId > 0) {
        synchronized (requestIds) {
          requestIdCount++;
          if (requestIds.size() < MAX_REQUEST_IDS) {
            requestIds.add(facts.requestId);
          }
        }
      }
    }

    void end(Status status) {
      if (!ended.compareAndSet(false, true)) {
        return;
      }
      String code = status.getCode().name();
      span.setAttribute(SpanFields.FLIGHT_KIND, kind);
      span.setAttribute(SpanFields.RPC_STATUS, code);
      span.setAttribute(SpanFields.REQUEST_MESSAGES, requests.get());
      span.setAttribute(SpanFields.RESPONSE_MESSAGES, responses.get());
      synchronized (requestIds) {
        if (requestIdCount > 0) {
          span.setAttribute(SpanFields.REQUEST_IDS, List.copyOf(requestIds));
          span.setAttribute(SpanFields.REQUEST_ID_COUNT, requestIdCount);
        }
      }
      if (status.isOk()) {
        span.setAttribute(SpanFields.ERROR, false);
      } else {
        // The description may quote the request (a column, a SQL fragment): only the code.
        String kindOfError = code.toLowerCase(Locale.ROOT);
        span.setAttribute(SpanFields.ERROR, true);
        span.setAttribute(SpanFields.ERROR_KIND, kindOfError);
        span.setStatus(StatusCode.ERROR, kindOfError);
      }
      span.end();
      telemetry.metrics().flightCall(method, kind, code, System.nanoTime() - startNanos);
    }
  }
}
