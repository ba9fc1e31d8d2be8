package io.storageengine.stress;

import io.storageengine.server.ConfigKey;
import io.storageengine.server.EngineServer;
import io.storageengine.server.Role;
import io.storageengine.server.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/** An in-process {@code se dev} ({@link Role#DEV}) on a free port with its data in a temp dir. */
final class TestServer implements AutoCloseable {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  final EngineServer server;
  final ServerEndpoint endpoint;

  private TestServer(EngineServer server) {
    this.server = server;
    this.endpoint = new ServerEndpoint("127.0.0.1", server.port());
  }

  /** Fast group commit and reconciliation so tests see their rows quickly. */
  static TestServer start(Path dataDir, Map<ConfigKey, String> overrides) {
    ServerConfig config = ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dataDir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "50ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "200ms");
    for (Map.Entry<ConfigKey, String> e : overrides.entrySet()) {
      config = config.with(e.getKey(), e.getValue());
    }
    return new TestServer(EngineServer.start(config, Role.DEV));
  }

  /** Sends an HTTP request; {@code contentType} null sends none. */
  HttpResponse<String> http(String method, String path, String contentType, String body)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(endpoint.httpBase() + path))
        .timeout(Duration.ofSeconds(30))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
    if (contentType != null) {
      b.header("Content-Type", contentType);
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Override
  public void close() {
    server.close();
  }
}
