package io.storageengine.cli;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;

/** A minimal client of the server's HTTP API, used by the catalog commands. */
final class HttpApi {
  private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final String base;
  private final Optional<String> token;

  HttpApi(String serverAddress, Optional<String> token) {
    String b = serverAddress.contains("://") ? serverAddress : "http://" + serverAddress;
    this.base = b.endsWith("/") ? b.substring(0, b.length() - 1) : b;
    this.token = token;
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
