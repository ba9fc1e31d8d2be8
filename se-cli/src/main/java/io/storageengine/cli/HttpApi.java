package io.storageengine.cli;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.common.tls.ClientTrust;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import javax.net.ssl.SSLException;

/** A minimal client of the server's HTTP API, used by the catalog commands. */
final class HttpApi {
  private final HttpClient client;
  private final String base;
  private final Optional<String> token;

  /** A client of {@code serverAddress}, verifying an {@code https://} server against {@code trust}. */
  HttpApi(String serverAddress, Optional<String> token, ClientTrust trust) {
    this.base = httpBase(serverAddress);
    this.token = token;
    // HTTP/1.1: on plain http the JDK client would otherwise upgrade to HTTP/2 (h2c) on its first
    // request, and JDK 25's client then had a later request on that connection cancelled
    // (RST_STREAM) by the server.
    this.client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
        .sslContext(trust.sslContext()).build();
  }

  /**
   * The HTTP base URL of a {@code --server-address}: {@code host:port} and {@code http://} are
   * plain, {@code https://} and {@code grpc+tls://} TLS, {@code grpc://} / {@code grpc+tcp://} plain.
   */
  static String httpBase(String serverAddress) {
    String b = serverAddress.contains("://") ? serverAddress : "http://" + serverAddress;
    if (b.startsWith("grpc+tls://")) {
      b = "https://" + b.substring("grpc+tls://".length());
    } else if (b.startsWith("grpc+tcp://") || b.startsWith("grpc://")) {
      b = "http://" + b.substring(b.indexOf("://") + 3);
    }
    return b.endsWith("/") ? b.substring(0, b.length() - 1) : b;
  }

  HttpResponse<String> send(String method, String path, String jsonBody) {
    HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60));
    token.ifPresent(t -> rb.header("Authorization", "Bearer " + t));
    if (jsonBody != null) {
      rb.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(jsonBody));
    } else {
      rb.method(method, HttpRequest.BodyPublishers.noBody());
    }
    try {
      return client.send(rb.build(), HttpResponse.BodyHandlers.ofString());
    } catch (SSLException e) {
      throw new SeException(ErrorCode.UNAVAILABLE, TlsOption.handshakeFailure(base, e));
    } catch (ConnectException e) {
      throw new SeException(ErrorCode.UNAVAILABLE, "cannot reach the server at " + base + " (is `se dev` running?)");
    } catch (IOException e) {
      throw new SeException(ErrorCode.UNAVAILABLE, "request to " + base + " failed: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SeException(ErrorCode.UNAVAILABLE, "interrupted");
    }
  }
}
