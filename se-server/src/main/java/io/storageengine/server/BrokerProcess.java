package io.storageengine.server;

import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.server.Server;
import io.storageengine.broker.Broker;
import io.storageengine.broker.BrokerHttpService;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code se start broker}: the task queue of distributed mode on its own listener. It records
 * {@code http://<listener>} ({@code https://} with {@code --tls.cert} and {@code --tls.key}) in
 * {@code broker/queue.json}, where workers and servers find it. The
 * broker API takes the cluster token ({@link ClusterToken}); {@code /health} is open.
 */
public final class BrokerProcess implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BrokerProcess.class);

  private final EngineContext context;
  private final Broker broker;
  private final Server server;

  private BrokerProcess(EngineContext context) {
    this.context = context;
    InetSocketAddress address = context.config().serverAddress();
    this.broker = context.own(new Broker(context.store(), context.config().broker(), Clock.systemUTC(),
        context.threads("se-broker-commit")));
    this.server = ListenerTls.bind(Server.builder(), address, context.tls())
        .gracefulShutdownTimeout(Duration.ofMillis(200), Duration.ofSeconds(5))
        .service("/health", (ctx, req) -> HttpResponse.of(ResponseHeaders.of(HttpStatus.OK)))
        .serviceUnder(BrokerHttpService.PATH_PREFIX, context.clusterToken().protect(new BrokerHttpService(broker)))
        .build();
    context.own((AutoCloseable) () -> server.stop().join());
    server.start().join();
    String advertised = ListenerTls.scheme(context.tls()) + "://" + address.getHostString() + ":"
        + server.activeLocalPort();
    broker.start(advertised);
    LOG.info("broker active at {} (epoch {})", advertised, broker.epoch());
  }

  public static BrokerProcess start(ServerConfig config) {
    return start(EngineContext.builder(config).writerPrefix("se-broker").build());
  }

  /** A broker on {@code context}, which it then owns: closing the broker closes the context. */
  public static BrokerProcess start(EngineContext context) {
    try {
      return new BrokerProcess(context);
    } catch (RuntimeException e) {
      context.close();
      throw e;
    }
  }

  public int port() {
    return server.activeLocalPort();
  }

  /** Stops the listener, then the broker, then everything else the context owns. */
  @Override
  public void close() {
    context.close();
  }
}
