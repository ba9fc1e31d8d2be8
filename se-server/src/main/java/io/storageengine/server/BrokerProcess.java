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
 * {@code http://<listener>} in {@code broker/queue.json}, where workers and servers find it.
 */
public final class BrokerProcess implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BrokerProcess.class);

  private final ClusterStorage storage;
  private final Broker broker;
  private final Server server;

  private BrokerProcess(ServerConfig config) {
    this.storage = ClusterStorage.open(config, null);
    InetSocketAddress address = config.serverAddress();
    this.broker = new Broker(storage.store(), config.broker(), Clock.systemUTC());
    this.server = Server.builder()
        .http(new InetSocketAddress(address.getHostString(), address.getPort()))
        .gracefulShutdownTimeout(Duration.ofMillis(200), Duration.ofSeconds(5))
        .service("/health", (ctx, req) -> HttpResponse.of(ResponseHeaders.of(HttpStatus.OK)))
        .serviceUnder(BrokerHttpService.PATH_PREFIX, new BrokerHttpService(broker))
        .build();
    server.start().join();
    String advertised = "http://" + address.getHostString() + ":" + server.activeLocalPort();
    broker.start(advertised);
    LOG.info("broker active at {} (epoch {})", advertised, broker.epoch());
  }

  public static BrokerProcess start(ServerConfig config) {
    return new BrokerProcess(config);
  }

  public int port() {
    return server.activeLocalPort();
  }

  @Override
  public void close() {
    server.stop().join();
    broker.close();
    storage.close();
  }
}
