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
 * The server's telemetry, built at startup: the tracer and metrics
 * ({@link Telemetry#fromEnvironment()}, installed as {@link Telemetry#current()} so ingestion,
 * the WAL and reconciliation reach them), and the pieces the composition root wires in: the
 * Flight call interceptor, the {@code /metrics} service, the traced cluster store, the catalog
 * operation listener, and allocator gauges.
 *
 * <p>When the embedding program already installed a {@link Telemetry} (tests, {@code se dev}
 * embedding a server), that one is used and left open on {@link #close}.
 */
public final class ServerObservability implements AutoCloseable {
  private final Telemetry telemetry;
  private final boolean owned;

  private ServerObservability(Telemetry telemetry, boolean owned) {
    this.telemetry = telemetry;
    this.owned = owned;
  }

  /** The installed telemetry, or one built from the environment and installed until {@link #close}. */
  public static ServerObservability start() {
    if (Telemetry.isInstalled()) {
      return new ServerObservability(Telemetry.current(), false);
    }
    Telemetry telemetry = Telemetry.fromEnvironment();
    Telemetry.install(telemetry);
    return new ServerObservability(telemetry, true);
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
