package io.storageengine.server.lb;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.linecorp.armeria.client.ClientFactory;
import com.linecorp.armeria.client.UnprocessedRequestException;
import com.linecorp.armeria.client.WebClient;
import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.util.Exceptions;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.Server;
import com.linecorp.armeria.server.ServiceRequestContext;
import com.linecorp.armeria.server.grpc.GrpcService;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.HttpErrors;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.common.tls.TlsConfig;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.server.EngineContext;
import io.storageengine.server.ListenerTls;
import io.storageengine.server.ServerConfig;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code se start lb}: one listener in front of the servers of a cluster. Arrow Flight calls
 * (ingestion, Flight SQL) are proxied by {@link FlightProxy}: each table's ingestion streams go
 * to one server chosen by rendezvous hashing on (catalog, namespace, table) over the live
 * servers. Plain HTTP (catalog API, Iceberg REST facade, metrics) is forwarded to the live
 * server that owns the client's connection. {@code /health} is the balancer's own (200 while at
 * least one server is live) and {@code /lb/servers} lists the servers it knows and their state.
 * With {@code --tls.cert} and {@code --tls.key} the balancer's own listener serves TLS; servers
 * registered as {@code https://host:port} are reached over TLS and verified against
 * {@code --tls.ca} (or the JDK's trust store), host names included.
 */
public final class LoadBalancer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LoadBalancer.class);

  private final ServerDirectory directory;
  private final FlightProxy flight;
  private final Map<String, WebClient> httpClients = new ConcurrentHashMap<>();
  /** Verifies {@code https://} servers against {@code --tls.ca} (or the JDK's trust store). */
  private final ClientFactory httpClientFactory;
  private final Server server;
  private final AutoCloseable owned;

  private LoadBalancer(InetSocketAddress address, List<String> servers, ObjectStore store, Duration probeInterval,
      ScheduledExecutorService timer, AutoCloseable owned, TlsConfig tls) {
    this.owned = owned;
    this.httpClientFactory = ClientFactory.builder()
        .tlsCustomizer(ssl -> ssl.trustManager(tls.trust().trustManagerFactory()))
        .build();
    this.directory = new ServerDirectory(servers, store, Clock.systemUTC(), probeInterval, timer, tls.trust()).start();
    this.flight = new FlightProxy(directory, tls.trust());
    GrpcService grpc = GrpcService.builder()
        .addService(flight.definition())
        .maxRequestMessageLength(FlightProxy.MAX_MESSAGE_BYTES)
        .maxResponseMessageLength(FlightProxy.MAX_MESSAGE_BYTES)
        .build();
    this.server = ListenerTls.bind(Server.builder(), address, tls)
        // Streams last as long as their clients want; the servers behind bound their own work.
        .requestTimeout(Duration.ZERO)
        .maxRequestLength(0)
        .idleTimeout(Duration.ofMinutes(5))
        .http2InitialConnectionWindowSize(16 * 1024 * 1024)
        .http2InitialStreamWindowSize(8 * 1024 * 1024)
        .gracefulShutdownTimeout(Duration.ofMillis(200), Duration.ofSeconds(5))
        .service(grpc)
        .service("/health", (ctx, req) -> directory.live().isEmpty()
            ? unavailable("no live server behind the load balancer")
            : HttpResponse.of(HttpStatus.OK))
        .service("/lb/servers", (ctx, req) -> {
          ObjectNode body = Json.object();
          ObjectNode list = body.putObject("servers");
          directory.view().forEach((server, live) -> list.put(server, live ? "live" : "down"));
          return HttpResponse.of(HttpStatus.OK, MediaType.JSON_UTF_8, Json.toBytes(body));
        })
        .serviceUnder("/", forwardHttp())
        .build();
    server.start().join();
    LOG.info("load balancer listening on {}{} in front of {}", server.activeLocalPort(),
        tls.serves() ? " (TLS)" : "", directory.view());
  }

  /**
   * Starts a plain balancer on {@code address} for the {@code servers} given ({@code host:port})
   * and, when {@code store} is not null, the servers registered in that cluster storage.
   */
  public static LoadBalancer start(InetSocketAddress address, List<String> servers, ObjectStore store,
      Duration probeInterval) {
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "se-lb-probe");
      t.setDaemon(true);
      return t;
    });
    try {
      return new LoadBalancer(address, servers, store, probeInterval, timer, timer::shutdownNow, TlsConfig.PLAIN);
    } catch (RuntimeException e) {
      timer.shutdownNow();
      throw e;
    }
  }

  /**
   * {@code se start lb}: listens on the configured {@code --server.address}, discovers servers
   * in the configured cluster storage and adds the {@code servers} given.
   */
  public static LoadBalancer start(ServerConfig config, List<String> servers, Duration probeInterval) {
    return start(EngineContext.builder(config).writerPrefix("se-lb").build(), servers, probeInterval);
  }

  /**
   * As {@link #start(ServerConfig, List, Duration)} on {@code context}, which the balancer then
   * owns: closing it closes the context.
   */
  public static LoadBalancer start(EngineContext context, List<String> servers, Duration probeInterval) {
    try {
      return new LoadBalancer(context.config().serverAddress(), servers, context.store(), probeInterval,
          context.scheduler("se-lb-probe"), context, context.tls());
    } catch (RuntimeException e) {
      context.close();
      throw e;
    }
  }

  public int port() {
    return server.activeLocalPort();
  }

  /** The live servers right now (tests, logs). */
  public List<String> liveServers() {
    return directory.live();
  }

  /**
   * Plain HTTP goes to the live server that owns the client's connection. The request is
   * buffered (the HTTP API's bodies are small), so one that could not be delivered, because the
   * server refused the connection, is sent to the next server in the connection's order.
   */
  private HttpService forwardHttp() {
    return (ServiceRequestContext ctx, HttpRequest req) -> {
      List<String> order = Rendezvous.order(FlightProxy.connectionKey(ctx), directory.live());
      if (order.isEmpty()) {
        return unavailable("no live server behind the load balancer; servers known: "
            + directory.view());
      }
      return HttpResponse.of(req.aggregate().thenCompose(request -> forward(request, order, 0)));
    };
  }

  private CompletableFuture<HttpResponse> forward(AggregatedHttpRequest request, List<String> order, int index) {
    String target = order.get(index);
    WebClient client = httpClients.computeIfAbsent(target, a -> WebClient.builder(ServerRegistration.httpBase(a))
        .factory(httpClientFactory)
        .responseTimeout(Duration.ZERO)
        .maxResponseLength(0)
        .build());
    return client.execute(request).aggregate().handle((response, failure) -> {
      if (failure == null) {
        return CompletableFuture.completedFuture(response.toHttpResponse());
      }
      if (Exceptions.peel(failure) instanceof UnprocessedRequestException) {
        directory.markDown(target);
        if (index + 1 < order.size()) {
          return forward(request, order, index + 1);
        }
        return CompletableFuture.completedFuture(unavailable("no live server accepted the request; tried " + order));
      }
      LOG.warn("server {} failed while answering {} {}: {}", target, request.method(), request.path(),
          failure.toString());
      return CompletableFuture.completedFuture(unavailable(
          "server " + target + " failed while answering; retry the request"));
    }).thenCompose(f -> f);
  }

  /** A 503 UNAVAILABLE in the engine's error model ({@link HttpErrors#engine}). */
  private static HttpResponse unavailable(String message) {
    HttpErrors.HttpError error = HttpErrors.engine(new SeException(ErrorCode.UNAVAILABLE, message));
    return HttpResponse.of(HttpStatus.valueOf(error.status()), MediaType.JSON_UTF_8, error.body());
  }

  @Override
  public void close() {
    server.stop().join();
    flight.close();
    directory.close();
    httpClientFactory.close();
    try {
      owned.close();
    } catch (Exception e) {
      LOG.warn("error while closing the balancer's context", e);
    }
  }
}
