package io.storageengine.broker;

import com.linecorp.armeria.server.Server;
import io.storageengine.objectstore.ObjectStore;
import java.net.InetSocketAddress;
import java.time.Clock;

/** A real broker behind a real Armeria listener on 127.0.0.1, port 0, as {@code se start broker} runs it. */
final class BrokerServer implements AutoCloseable {
  final Broker broker;
  final Server server;
  final String address;

  BrokerServer(ObjectStore store, BrokerConfig config, Clock clock) {
    broker = new Broker(store, config, clock);
    server = Server.builder()
        .http(new InetSocketAddress("127.0.0.1", 0))
        .gracefulShutdownTimeoutMillis(0, 0)
        .serviceUnder(BrokerHttpService.PATH_PREFIX, new BrokerHttpService(broker))
        .build();
    server.start().join();
    address = "http://127.0.0.1:" + server.activeLocalPort();
    broker.start(address);
  }

  @Override
  public void close() {
    broker.close();
    // Armeria's stop takes about 2 s to complete; let it finish in the background instead of
    // slowing every test (a test that needs the listener gone joins server.stop() itself).
    server.stop();
  }
}
