package io.storageengine.server.lb;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.storageengine.common.Json;
import io.storageengine.objectstore.ObjectStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How servers announce themselves to load balancers through cluster storage: each running
 * {@code se start server} keeps {@code servers/<host>_<port>.json} fresh (a heartbeat every
 * {@link #HEARTBEAT}) and deletes it when it stops. A record whose heartbeat is older than
 * {@link #STALE_AFTER} belongs to a server that died without cleaning up and is ignored.
 * Registration is only discovery: load balancers still probe {@code /health} before routing.
 */
public final class ServerRegistration implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ServerRegistration.class);
  public static final String PREFIX = "servers/";
  public static final Duration HEARTBEAT = Duration.ofSeconds(2);
  public static final Duration STALE_AFTER = Duration.ofSeconds(10);

  /**
   * The stored record: where the server listens ({@code host:port}, or {@code https://host:port}
   * when its listener serves TLS) and when it last said it was alive.
   */
  public record Entry(@JsonProperty("address") String address, @JsonProperty("pid") long pid,
      @JsonProperty("heartbeat_ms") long heartbeatMs) {}

  private final ObjectStore store;
  private final String key;
  private final String address;
  private final Clock clock;
  private final ScheduledExecutorService timer;

  private ServerRegistration(ObjectStore store, String address, Clock clock, ScheduledExecutorService timer) {
    this.store = store;
    this.address = address;
    this.key = keyOf(address);
    this.clock = clock;
    this.timer = timer;
  }

  /**
   * Registers {@code address} ({@code host:port}, {@code https://host:port} for TLS) now and keeps the record fresh on {@code timer}
   * (shut down by {@link #close}) until closed.
   */
  public static ServerRegistration start(ObjectStore store, String address, Clock clock,
      ScheduledExecutorService timer) {
    ServerRegistration registration = new ServerRegistration(store, address, clock, timer);
    registration.beat();
    registration.timer.scheduleWithFixedDelay(registration::beat, HEARTBEAT.toMillis(), HEARTBEAT.toMillis(),
        TimeUnit.MILLISECONDS);
    LOG.info("registered as {} for load balancers ({})", address, registration.key);
    return registration;
  }

  /** {@code servers/<host>_<port>.json}, whether or not the server speaks TLS. */
  static String keyOf(String address) {
    return PREFIX + hostPort(address).replace(':', '_') + ".json";
  }

  /** Whether a server's address ({@code https://host:port} or {@code host:port}) names a TLS listener. */
  static boolean tls(String address) {
    return address.startsWith("https://");
  }

  /** {@code host:port} of a server's address. */
  static String hostPort(String address) {
    return tls(address) ? address.substring("https://".length()) : address;
  }

  /** The base URL of a server's HTTP API: {@code https://host:port} or {@code http://host:port}. */
  static String httpBase(String address) {
    return tls(address) ? address : "http://" + address;
  }

  /** The addresses of servers whose records are fresh at {@code nowMs}. */
  public static List<String> live(ObjectStore store, long nowMs) {
    List<String> addresses = new ArrayList<>();
    for (ObjectStore.ObjectInfo info : store.list(PREFIX)) {
      read(store, info.key())
          .filter(e -> nowMs - e.heartbeatMs() <= STALE_AFTER.toMillis())
          .ifPresent(e -> addresses.add(e.address()));
    }
    return addresses;
  }

  private static Optional<Entry> read(ObjectStore store, String key) {
    try {
      return store.get(key).map(blob -> {
        try {
          return Json.MAPPER.readValue(blob.data(), Entry.class);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    } catch (RuntimeException e) {
      // A record being rewritten or deleted, or a foreign file: not a server we can route to.
      LOG.debug("ignoring server record {}: {}", key, e.getMessage());
      return Optional.empty();
    }
  }

  private void beat() {
    try {
      Entry entry = new Entry(address, ProcessHandle.current().pid(), clock.millis());
      store.put(key, Json.MAPPER.writeValueAsBytes(entry));
    } catch (IOException | RuntimeException e) {
      // Storage hiccup: the next beat retries; load balancers keep the server for STALE_AFTER.
      LOG.warn("could not refresh the server record {}: {}", key, e.getMessage());
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
    try {
      timer.awaitTermination(5, TimeUnit.SECONDS);
      store.delete(key);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      LOG.warn("could not remove the server record {}: {}", key, e.getMessage());
    }
  }
}
