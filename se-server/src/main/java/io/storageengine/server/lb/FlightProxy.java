package io.storageengine.server.lb;

import com.linecorp.armeria.server.ServiceRequestContext;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.storageengine.common.SeException;
import io.storageengine.common.tls.ClientTrust;
import io.storageengine.server.ByteArrayMarshaller;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.apache.arrow.flight.impl.FlightServiceGrpc;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The load balancer's Arrow Flight service: every Flight method, forwarded message by message
 * (as opaque bytes) to one live server, with gRPC flow control carried through in both
 * directions, so a slow server slows its client down instead of filling the balancer's memory.
 *
 * <p>Which server: an ingestion stream ({@code DoPut}) goes to the owner of its table by
 * rendezvous hashing over the live servers ({@link RoutingKey}), so a table's writes meet on
 * one server while it is healthy; every other call goes to the owner of its client connection,
 * which keeps a Flight SQL client's session (and its {@code GetFlightInfo}/{@code DoGet} pairs)
 * on one server.
 *
 * <p>Failover: a call whose server refuses the connection is replayed, before anything was
 * answered, on the next server in the key's order; the refusing server is marked down until its
 * health probe succeeds again. Once a server has answered, a failure ends the call with the
 * server's status (typically {@code UNAVAILABLE}): the balancer never replays messages a server
 * may have made durable, because only the client knows which of its batches were acknowledged.
 */
final class FlightProxy implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FlightProxy.class);
  /** Messages kept for a replay on the next server; beyond either bound the call cannot fail over. */
  private static final int REPLAY_MAX_MESSAGES = 64;
  private static final long REPLAY_MAX_BYTES = 64L << 20;
  static final int MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

  private static final ByteArrayMarshaller BYTES = ByteArrayMarshaller.INSTANCE;

  /** Request headers that belong to one HTTP/2 hop, not to the call: never forwarded. */
  private static final Set<String> HOP_HEADERS = Set.of("content-type", "te", "user-agent", "host",
      "content-length", "connection", "grpc-encoding", "grpc-accept-encoding", "grpc-timeout",
      "grpc-status", "grpc-message", "accept-encoding");

  private final ServerDirectory directory;
  private final ClientTrust trust;
  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();

  /** @param trust what {@code https://} servers' certificates are verified against */
  FlightProxy(ServerDirectory directory, ClientTrust trust) {
    this.directory = directory;
    this.trust = trust;
  }

  /** The Flight service with every method proxied, for the balancer's gRPC listener. */
  ServerServiceDefinition definition() {
    ServiceDescriptor flight = FlightServiceGrpc.getServiceDescriptor();
    ServerServiceDefinition.Builder builder = ServerServiceDefinition.builder(flight.getName());
    for (MethodDescriptor<?, ?> method : flight.getMethods()) {
      MethodDescriptor<byte[], byte[]> raw = method.toBuilder(BYTES, BYTES).build();
      boolean ingest = method.getBareMethodName().equals("DoPut");
      builder.addMethod(raw, (ServerCallHandler<byte[], byte[]>) (call, headers) ->
          new ProxyCall(raw, call, forwardable(headers), connectionKey(), ingest).start());
    }
    return builder.build();
  }

  private static String connectionKey() {
    return connectionKey(ServiceRequestContext.currentOrNull());
  }

  /** The key that keeps one client connection's calls (Flight and HTTP) on one server. */
  static String connectionKey(ServiceRequestContext ctx) {
    return ctx == null ? "connection/unknown" : "connection/" + ctx.remoteAddress();
  }

  private ManagedChannel channel(String address) {
    ManagedChannel channel = channels.computeIfAbsent(address, this::newChannel);
    // A server that was down and is live again: do not wait out gRPC's reconnect backoff.
    if (channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
      channel.resetConnectBackoff();
    }
    return channel;
  }

  private ManagedChannel newChannel(String address) {
    NettyChannelBuilder builder = NettyChannelBuilder.forTarget(ServerRegistration.hostPort(address))
        .maxInboundMessageSize(MAX_MESSAGE_BYTES)
        .flowControlWindow(8 * 1024 * 1024);
    if (!ServerRegistration.tls(address)) {
      return builder.usePlaintext().build();
    }
    // gRPC verifies the server's certificate and its host name against the target's host.
    try {
      return builder.useTransportSecurity()
          .sslContext(GrpcSslContexts.forClient().trustManager(trust.trustManagerFactory()).build())
          .build();
    } catch (SSLException e) {
      throw SeException.internal("cannot build the TLS context for " + address, e);
    }
  }

  static Metadata forwardable(Metadata headers) {
    Metadata out = new Metadata();
    if (headers == null) {
      return out;
    }
    for (String name : headers.keys()) {
      if (name.startsWith(":") || name.startsWith("armeria.") || HOP_HEADERS.contains(name)) {
        continue;
      }
      if (name.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
        Metadata.Key<byte[]> key = Metadata.Key.of(name, Metadata.BINARY_BYTE_MARSHALLER);
        for (byte[] value : headers.getAll(key)) {
          out.put(key, value);
        }
      } else {
        Metadata.Key<String> key = Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
        for (String value : headers.getAll(key)) {
          out.put(key, value);
        }
      }
    }
    return out;
  }

  private static boolean refusedConnection(Status status) {
    return status.getCode() == Status.Code.UNAVAILABLE && ServerDirectory.refused(status.getCause());
  }

  /**
   * One proxied call. Every callback of both sides takes this object's lock: the client side's
   * callbacks run on Armeria's threads, the server side's on gRPC's, and neither call object is
   * thread-safe.
   */
  private final class ProxyCall extends ServerCall.Listener<byte[]> {
    private final MethodDescriptor<byte[], byte[]> method;
    private final ServerCall<byte[], byte[]> downstream;
    private final Metadata headers;
    private final String connectionKey;
    private final boolean ingest;
    private final Set<String> tried = new HashSet<>();
    /** Messages not yet routed, then the replay buffer until the server first answers. */
    private final List<byte[]> buffered = new ArrayList<>();
    private long bufferedBytes;
    private boolean replayable = true;
    private String routingKey;
    private ClientCall<byte[], byte[]> upstream;
    private String server;
    private int attempt;
    private boolean answered;
    private boolean halfClosed;
    private boolean finished;
    /** A request message from the client waits until the server side can take one. */
    private boolean downstreamRequestPending;
    /** A response message from the server waits until the client side can take one. */
    private boolean upstreamRequestPending;

    ProxyCall(MethodDescriptor<byte[], byte[]> method, ServerCall<byte[], byte[]> downstream, Metadata headers,
        String connectionKey, boolean ingest) {
      this.method = method;
      this.downstream = downstream;
      this.headers = headers;
      this.connectionKey = connectionKey;
      this.ingest = ingest;
    }

    synchronized ServerCall.Listener<byte[]> start() {
      if (!ingest) {
        routingKey = connectionKey;
        connect();
      }
      if (!finished) {
        downstream.request(1);
      }
      return this;
    }

    @Override
    public synchronized void onMessage(byte[] message) {
      if (finished) {
        return;
      }
      if (upstream == null) {
        buffered.add(message);
        bufferedBytes += message.length;
        Optional<String> key = RoutingKey.ofDoPut(buffered);
        if (key.isPresent() || buffered.size() >= RoutingKey.MAX_MESSAGES) {
          routingKey = key.orElse(connectionKey);
          connect();
        } else {
          downstream.request(1);
        }
        return;
      }
      if (replayable) {
        buffered.add(message);
        bufferedBytes += message.length;
        if (buffered.size() > REPLAY_MAX_MESSAGES || bufferedBytes > REPLAY_MAX_BYTES) {
          dropReplay();
        }
      }
      upstream.sendMessage(message);
      requestFromClientWhenReady();
    }

    @Override
    public synchronized void onHalfClose() {
      halfClosed = true;
      if (finished) {
        return;
      }
      if (upstream == null) {
        routingKey = RoutingKey.ofDoPut(buffered).orElse(connectionKey);
        connect();
      } else {
        upstream.halfClose();
      }
    }

    @Override
    public synchronized void onCancel() {
      finished = true;
      if (upstream != null) {
        upstream.cancel("the client cancelled the call", null);
      }
    }

    @Override
    public synchronized void onReady() {
      // The client can take responses again.
      if (upstreamRequestPending && upstream != null && downstream.isReady()) {
        upstreamRequestPending = false;
        upstream.request(1);
      }
    }

    /** Opens the call on the first live server in the key's order not yet tried, replaying what is buffered. */
    private void connect() {
      List<String> order = Rendezvous.order(routingKey, directory.live());
      order.removeAll(tried);
      if (order.isEmpty()) {
        finish(Status.UNAVAILABLE.withDescription(tried.isEmpty()
            ? "no live server to forward to; servers known to the load balancer: " + directory.view()
            : "no live server accepted the call; tried " + tried), new Metadata());
        return;
      }
      server = order.get(0);
      tried.add(server);
      int generation = ++attempt;
      upstream = channel(server).newCall(method, CallOptions.DEFAULT);
      upstream.start(new Upstream(generation), copy(headers));
      upstream.request(1);
      for (byte[] message : buffered) {
        upstream.sendMessage(message);
      }
      if (!replayable) {
        buffered.clear();
      }
      if (halfClosed) {
        upstream.halfClose();
      } else {
        requestFromClientWhenReady();
      }
    }

    private void requestFromClientWhenReady() {
      if (upstream.isReady()) {
        downstream.request(1);
      } else {
        downstreamRequestPending = true;
      }
    }

    private void dropReplay() {
      replayable = false;
      buffered.clear();
      bufferedBytes = 0;
    }

    private void finish(Status status, Metadata trailers) {
      if (!finished) {
        finished = true;
        downstream.close(status, trailers);
      }
    }

    private static Metadata copy(Metadata headers) {
      Metadata copy = new Metadata();
      copy.merge(headers);
      return copy;
    }

    /** The server side of one attempt; callbacks of an abandoned attempt are ignored. */
    private final class Upstream extends ClientCall.Listener<byte[]> {
      private final int generation;

      Upstream(int generation) {
        this.generation = generation;
      }

      @Override
      public void onHeaders(Metadata responseHeaders) {
        synchronized (ProxyCall.this) {
          if (generation != attempt || finished) {
            return;
          }
          answered();
          downstream.sendHeaders(forwardable(responseHeaders));
        }
      }

      @Override
      public void onMessage(byte[] message) {
        synchronized (ProxyCall.this) {
          if (generation != attempt || finished) {
            return;
          }
          answered();
          downstream.sendMessage(message);
          if (downstream.isReady()) {
            upstream.request(1);
          } else {
            upstreamRequestPending = true;
          }
        }
      }

      @Override
      public void onReady() {
        synchronized (ProxyCall.this) {
          if (generation != attempt || finished) {
            return;
          }
          if (downstreamRequestPending && upstream.isReady()) {
            downstreamRequestPending = false;
            downstream.request(1);
          }
        }
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        synchronized (ProxyCall.this) {
          if (generation != attempt || finished) {
            return;
          }
          if (!answered && replayable && refusedConnection(status)) {
            LOG.info("server {} refused the connection; trying the next server for {}", server, method.getBareMethodName());
            directory.markDown(server);
            upstream = null;
            connect();
            return;
          }
          finish(status, forwardable(trailers));
        }
      }

      private void answered() {
        if (!answered) {
          answered = true;
          dropReplay();
        }
      }
    }
  }

  @Override
  public void close() {
    channels.values().forEach(ManagedChannel::shutdownNow);
    for (ManagedChannel channel : channels.values()) {
      try {
        channel.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
