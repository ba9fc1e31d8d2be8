package io.storageengine.broker;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.broker.BrokerMessages.AckRequest;
import io.storageengine.broker.BrokerMessages.AckResponse;
import io.storageengine.broker.BrokerMessages.HeartbeatRequest;
import io.storageengine.broker.BrokerMessages.HeartbeatResponse;
import io.storageengine.broker.BrokerMessages.LeaseRequest;
import io.storageengine.broker.BrokerMessages.ScheduleRequest;
import io.storageengine.broker.BrokerMessages.ScheduleResponse;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.common.tls.ClientTrust;
import io.storageengine.objectstore.ObjectStore;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Talks to the active broker over HTTP. The broker is found through the address recorded in
 * {@code broker/queue.json}; when the broker answers UNAVAILABLE (fenced, shutting down, storage
 * trouble) or cannot be reached, the client reads the queue object again and retries, so it
 * follows a takeover. Thread-safe.
 *
 * <p>Retried calls: schedule and heartbeat are idempotent. A lease whose answer was lost leaves
 * its tasks leased until the lease expires; an acknowledgement whose answer was lost is reported
 * as CONFLICT (the lease is gone) by the retry.
 */
public final class BrokerClient {
  private final ObjectStore store;
  private final HttpClient http;
  private final Duration requestTimeout;
  private final int attempts;
  private final Duration retryBackoff;
  private final Optional<String> token;
  private volatile String cachedAddress;

  /**
   * @param store cluster storage holding {@code broker/queue.json}
   * @param requestTimeout bound on one HTTP exchange
   * @param attempts how many times one call is tried (at least 1)
   * @param retryBackoff first pause between tries; doubles per try
   */
  public BrokerClient(ObjectStore store, Duration requestTimeout, int attempts, Duration retryBackoff) {
    this(store, requestTimeout, attempts, retryBackoff, Optional.empty());
  }

  /**
   * As the four-argument constructor, sending {@code token} (the cluster token, when set) as
   * {@code Authorization: Bearer <token>} with every call.
   */
  public BrokerClient(ObjectStore store, Duration requestTimeout, int attempts, Duration retryBackoff,
      Optional<String> token) {
    this(store, requestTimeout, attempts, retryBackoff, token, ClientTrust.jdkDefault());
  }

  /**
   * As the five-argument constructor, verifying an {@code https://} broker against {@code trust}
   * ({@code --tls.ca}, or the JDK's trust store).
   */
  public BrokerClient(ObjectStore store, Duration requestTimeout, int attempts, Duration retryBackoff,
      Optional<String> token, ClientTrust trust) {
    this.token = java.util.Objects.requireNonNull(token, "token");
    if (attempts < 1) {
      throw SeException.invalid("broker client attempts must be >= 1, got %d", attempts);
    }
    this.store = store;
    this.requestTimeout = requestTimeout;
    this.attempts = attempts;
    this.retryBackoff = retryBackoff;
    this.http = HttpClient.newBuilder().connectTimeout(requestTimeout).sslContext(trust.sslContext()).build();
  }

  /** Defaults: 10 s per request, 5 tries starting 100 ms apart (about 3 s to find a new broker). */
  public BrokerClient(ObjectStore store) {
    this(store, Optional.empty());
  }

  /** The defaults, sending {@code token} (the cluster token, when set) with every call. */
  public BrokerClient(ObjectStore store, Optional<String> token) {
    this(store, token, ClientTrust.jdkDefault());
  }

  /** The defaults, sending {@code token} and verifying an {@code https://} broker against {@code trust}. */
  public BrokerClient(ObjectStore store, Optional<String> token, ClientTrust trust) {
    this(store, Duration.ofSeconds(10), 5, Duration.ofMillis(100), token, trust);
  }

  /** The broker address recorded in the queue object, or empty when no broker ever started. */
  public Optional<String> discover() {
    return store.get(QueueDocument.KEY).map(b -> QueueDocument.parse(b.data()).brokerAddress());
  }

  /** Schedules a task (unique by key); see {@link Broker#schedule}. */
  public ScheduleOutcome schedule(String key, String kind, Map<String, String> payload) {
    return call("schedule", new ScheduleRequest(key, kind, payload), ScheduleResponse.class).outcome();
  }

  /** Leases up to {@code max} tasks of {@code kinds} (any when empty) for {@code worker}. */
  public LeaseGrant lease(String worker, Set<String> kinds, int max) {
    return call("lease", new LeaseRequest(worker, List.copyOf(kinds), max), LeaseGrant.class);
  }

  /** Extends a lease; returns the new expiry. CONFLICT when the lease is no longer held. */
  public long heartbeat(String key, String leaseId) {
    return call("heartbeat", new HeartbeatRequest(key, leaseId), HeartbeatResponse.class).leaseExpiresMs();
  }

  /** Acknowledges success. */
  public AckOutcome ackSuccess(String key, String leaseId) {
    return call("ack", new AckRequest(key, leaseId, true, null, null), AckResponse.class).outcome();
  }

  /** Acknowledges failure with a reason; {@code retryAfter} null leaves the delay to the broker. */
  public AckOutcome ackFailure(String key, String leaseId, String error, Duration retryAfter) {
    Long after = retryAfter == null ? null : retryAfter.toMillis();
    return call("ack", new AckRequest(key, leaseId, false, error, after), AckResponse.class).outcome();
  }

  /** The queue as the active broker holds it. */
  public QueueDocument tasks() {
    return exchange("tasks", null, QueueDocument.class);
  }

  private <T> T call(String operation, Object body, Class<T> type) {
    return exchange(operation, Json.toBytes(body), type);
  }

  private <T> T exchange(String operation, byte[] body, Class<T> type) {
    SeException last = null;
    long pause = retryBackoff.toMillis();
    for (int attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) {
        sleep(pause);
        pause *= 2;
      }
      String address = cachedAddress;
      if (address == null) {
        Optional<String> found = discover();
        if (found.isEmpty()) {
          last = new SeException(ErrorCode.UNAVAILABLE,
              "no broker: " + QueueDocument.KEY + " does not exist in " + store.describe());
          continue;
        }
        address = found.get();
        cachedAddress = address;
      }
      try {
        return send(address, operation, body, type);
      } catch (SeException e) {
        if (!e.code().retryable()) {
          throw e;
        }
        // The broker may have changed: look it up again before the next try.
        cachedAddress = null;
        last = e;
      }
    }
    throw last;
  }

  private <T> T send(String address, String operation, byte[] body, Class<T> type) {
    URI uri = URI.create(baseUri(address) + BrokerHttpService.PATH_PREFIX + operation);
    HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(requestTimeout);
    token.ifPresent(t -> request.header("Authorization", "Bearer " + t));
    if (body == null) {
      request.GET();
    } else {
      request.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body));
    }
    HttpResponse<byte[]> response;
    try {
      response = http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    } catch (javax.net.ssl.SSLException e) {
      // Certificate not trusted, wrong host name, a plain-HTTP peer: say so, it will not heal by itself.
      throw SeException.unavailable("broker at " + address + ": TLS failed (" + e.getMessage()
          + "; check --tls.ca and the broker's certificate)", e);
    } catch (IOException e) {
      throw SeException.unavailable("broker at " + address + " is unreachable: " + e.getClass().getSimpleName(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw SeException.unavailable("interrupted while calling the broker at " + address, e);
    }
    if (response.statusCode() == 200) {
      return Json.read(response.body(), type);
    }
    throw errorOf(address, response);
  }

  private static SeException errorOf(String address, HttpResponse<byte[]> response) {
    ErrorCode code = ErrorCode.UNAVAILABLE;
    String message = "broker at " + address + " answered HTTP " + response.statusCode();
    try {
      JsonNode error = Json.parse(response.body()).path("error");
      if (error.hasNonNull("code") && error.hasNonNull("message")) {
        code = ErrorCode.valueOf(error.get("code").asText());
        message = error.get("message").asText();
      }
    } catch (RuntimeException e) {
      // Not our error body (a proxy, a different service): keep the status-based message.
      if (response.statusCode() < 500) {
        code = ErrorCode.INTERNAL;
      }
    }
    return new SeException(code, message);
  }

  private static String baseUri(String address) {
    String base = address.contains("://") ? address : "http://" + address;
    return base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw SeException.unavailable("interrupted while waiting to retry the broker", e);
    }
  }
}
