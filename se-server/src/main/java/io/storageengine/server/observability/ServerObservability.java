package io.storageengine.server.observability;

import com.linecorp.armeria.server.HttpService;
import io.grpc.ServerInterceptor;
import io.storageengine.catalog.OperationListener;
import io.storageengine.catalog.TracingOperationListener;
import io.storageengine.common.telemetry.Telemetry;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.objectstore.TracingObjectStore;
import java.util.concurrent.ExecutorService;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The engine's telemetry, built at startup: the tracer and metrics
 * ({@link Telemetry#fromEnvironment()}), which the composition root hands to ingestion, the WAL,
 * reconciliation and the catalogs, and the pieces it wires in: the Flight call interceptor, the
 * {@code /metrics} service, the traced cluster store, the catalog operation listener, and
 * allocator gauges. Each engine has its own; nothing is installed process-wide.
 *
 * <p>An embedding program (tests) may give its own {@link Telemetry}; that one is left open on
 * {@link #close}.
 */
public final class ServerObservability implements AutoCloseable {
  private final Telemetry telemetry;
  private final boolean owned;

  private ServerObservability(Telemetry telemetry, boolean owned) {
    this.telemetry = telemetry;
    this.owned = owned;
  }

  /** Telemetry built from the environment, closed by {@link #close}. */
  public static ServerObservability start() {
    return new ServerObservability(Telemetry.fromEnvironment(), true);
  }

  /** {@code telemetry} when not null (the embedder's, left open), else {@link #start()}. */
  public static ServerObservability start(Telemetry telemetry) {
    return telemetry == null ? start() : new ServerObservability(telemetry, false);
  }

  public Telemetry telemetry() {
    return telemetry;
  }

  /** {@code store} reporting every call as a {@code storage.operation} span and in the metrics. */
  public ObjectStore traced(ObjectStore store, String storage) {
    return new TracingObjectStore(store, storage, telemetry);
  }

  /** For {@code TenantCatalogRegistry.Builder#listener}: a span per catalog operation. */
  public OperationListener catalogListener() {
    return new TracingOperationListener(telemetry);
  }

  /** The interceptor that opens a span per Flight call. */
  public ServerInterceptor flightInterceptor() {
    return new FlightCallTracer(telemetry);
  }

  /** {@code executor} running each task in the tracing context of its submitter (Flight's producer executor). */
  public ExecutorService propagating(ExecutorService executor) {
    return FlightCallTracer.propagating(executor);
  }

  /** The {@code /metrics} route. */
  public HttpService metricsService() {
    return new MetricsHttpService(telemetry.metrics());
  }

  /** Reports {@code allocator}'s allocated and peak bytes as {@code se.arrow.memory.*{allocator=name}}. */
  public void watchAllocator(String name, BufferAllocator allocator) {
    telemetry.metrics().arrowAllocator(name, allocator::getAllocatedMemory, allocator::getPeakMemoryAllocation);
  }

  /** Flushes and closes the telemetry if this server built it. */
  @Override
  public void close() {
    if (owned) {
      telemetry.close();
    }
  }
}
