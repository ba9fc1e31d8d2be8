package io.storageengine.secretstore;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** A small in-process HTTP server for the fake cloud services of the tests. */
abstract class FakeHttpServer implements AutoCloseable {
  protected final HttpServer server;
  private final ExecutorService pool = Executors.newFixedThreadPool(8);

  FakeHttpServer() throws IOException {
    this(HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64));
  }

  FakeHttpServer(HttpServer server) {
    this.server = server;
    server.setExecutor(pool);
    server.createContext("/", exchange -> {
      try (exchange) {
        handle(exchange);
      } catch (RuntimeException e) {
        respond(exchange, 500, "{\"error\":\"" + e.getClass().getSimpleName() + "\"}", "application/json");
      }
    });
    server.start();
  }

  abstract void handle(HttpExchange exchange) throws IOException;

  URI uri() {
    String scheme = server instanceof com.sun.net.httpserver.HttpsServer ? "https" : "http";
    return URI.create(scheme + "://127.0.0.1:" + server.getAddress().getPort());
  }

  static void respond(HttpExchange exchange, int status, String body, String contentType) throws IOException {
    byte[] bytes = body == null ? new byte[0] : body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    if (contentType != null) {
      exchange.getResponseHeaders().set("Content-Type", contentType);
    }
    exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
    if (bytes.length > 0) {
      exchange.getResponseBody().write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    pool.shutdownNow();
  }
}
