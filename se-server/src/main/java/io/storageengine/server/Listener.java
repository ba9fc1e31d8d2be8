package io.storageengine.server;

import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.Server;
import com.linecorp.armeria.server.ServerBuilder;
import com.linecorp.armeria.server.grpc.GrpcService;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.storageengine.common.tls.TlsConfig;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.function.UnaryOperator;
import org.apache.arrow.flight.FlightGrpcUtils;
import org.apache.arrow.flight.FlightProducer;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one listener: Armeria serving plain HTTP routes and, on the same port, gRPC with the Arrow
 * Flight service (ingestion and Flight SQL). Requests are told apart by protocol, not by port.
 * With {@code --tls.cert} and {@code --tls.key} both are served over TLS ({@link ListenerTls}).
 */
public final class Listener implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Listener.class);
  /** Largest gRPC message accepted (one Arrow record batch). */
  public static final int MAX_GRPC_MESSAGE_BYTES = 256 * 1024 * 1024;

  private final Server server;

  /** Messages as plain bytes: copied out of Arrow buffers while they are still alive. */
  private static final ByteArrayMarshaller BYTES = ByteArrayMarshaller.INSTANCE;

  private Listener(Server server) {
    this.server = server;
  }

  /**
   * Starts listening. {@code routes} maps exact paths or {@code prefix:} paths (Armeria route
   * syntax) to HTTP services; the Flight service, bound with byte-array messages, is adapted by
   * {@code methods} (ingestion replaces DoPut), wrapped by {@code interceptors} and runs its
   * producer's DoPut handlers on {@code flightExecutor}; {@code tls} decides between HTTPS and
   * plain HTTP.
   */
  public static Listener start(InetSocketAddress address, Map<String, HttpService> routes,
      BufferAllocator allocator, FlightProducer producer, ExecutorService flightExecutor,
      UnaryOperator<ServerServiceDefinition> methods, List<ServerInterceptor> interceptors, TlsConfig tls) {
    var flight = FlightGrpcUtils.createFlightService(allocator, producer, FlightHandshake.ACCEPT_ALL, flightExecutor);
    // Armeria serializes a response message later, on its event loop; Flight frees a batch's
    // buffers as soon as sendMessage returns. Re-marshalling every message to bytes inside
    // sendMessage (on the producer's thread) keeps the two lifetimes apart.
    var definition = ServerInterceptors.intercept(
        methods.apply(ServerInterceptors.useMarshalledMessages(flight.bindService(), BYTES)), interceptors);
    GrpcService grpc = GrpcService.builder()
        .addService(definition)
        .maxRequestMessageLength(MAX_GRPC_MESSAGE_BYTES)
        .maxResponseMessageLength(MAX_GRPC_MESSAGE_BYTES)
        // Producers block (waiting for a slow client, for WAL durability): never on the event loop.
        .useBlockingTaskExecutor(true)
        .exceptionHandler((ctx, status, cause, metadata) -> {
          // Failures that escape the Flight layer (transport, marshalling) are logged here once.
          if (status.getCode() == io.grpc.Status.Code.UNKNOWN || status.getCode() == io.grpc.Status.Code.INTERNAL) {
            LOG.warn("gRPC call {} failed: {}", ctx.path(), status, cause);
          }
          return status;
        })
        .build();
    ServerBuilder sb = ListenerTls.bind(Server.builder(), address, tls)
        // Flight streams live as long as the client wants; HTTP handlers bound their own work.
        .requestTimeout(Duration.ZERO)
        .maxRequestLength(0)
        .idleTimeout(Duration.ofMinutes(5))
        .http2InitialConnectionWindowSize(16 * 1024 * 1024)
        .http2InitialStreamWindowSize(8 * 1024 * 1024)
        .gracefulShutdownTimeout(Duration.ofMillis(200), Duration.ofSeconds(5))
        .service(grpc);
    routes.forEach(sb::service);
    Server server = sb.build();
    server.start().join();
    LOG.info("listening on {} ({} and Arrow Flight{})", server.activeLocalPort(), tls.serves() ? "HTTPS" : "HTTP",
        tls.serves() ? " over TLS" : "");
    return new Listener(server);
  }

  public int port() {
    return server.activeLocalPort();
  }

  @Override
  public void close() {
    server.stop().join();
  }

}
