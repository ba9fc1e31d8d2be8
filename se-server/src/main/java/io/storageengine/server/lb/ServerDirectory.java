package io.storageengine.server.lb;

import io.storageengine.common.tls.ClientTrust;
import io.storageengine.objectstore.ObjectStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The servers a load balancer may route to, and which of them are live. Candidates are the
 * configured addresses plus those registered in cluster storage ({@link ServerRegistration});
 * an address is {@code host:port} (plain) or {@code https://host:port} (TLS),
 * listed once per registration heartbeat;
 * each candidate's {@code GET /health} is probed every {@code probeInterval}. A candidate is
 * live after a successful probe; it is down once a probe finds nothing listening, after
 * {@link #FAILED_PROBES_TO_DOWN} probes in a row that fail otherwise (timeouts of a busy but
 * alive server), or as soon as the proxy could not connect to it ({@link #markDown}).
 */
final class ServerDirectory implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ServerDirectory.class);
  static final int FAILED_PROBES_TO_DOWN = 2;

  private final List<String> configured;
  private final ObjectStore store;
  private final Clock clock;
  private final Duration probeInterval;
  private final Duration probeTimeout;
  private final HttpClient http;
  private final ScheduledExecutorService timer;
  /** Candidate address -> live. */
  private final Map<String, Boolean> state = new ConcurrentHashMap<>();
  /** Candidate address -> failed probes in a row. */
  private final Map<String, Integer> failures = new ConcurrentHashMap<>();
  private volatile Set<String> candidates = Set.of();
  /** When registered servers were last listed (only the probe thread reads and writes it). */
  private long lastDiscoveryMs = Long.MIN_VALUE / 2;

  /**
   * @param configured {@code host:port} of servers to use whether or not they registered
   * @param store cluster storage to discover registered servers in, or null for none
   * @param timer runs discovery and probes (shut down by {@link #close})
   * @param trust what {@code https://} servers' certificates are verified against
   */
  ServerDirectory(List<String> configured, ObjectStore store, Clock clock, Duration probeInterval,
      ScheduledExecutorService timer, ClientTrust trust) {
    this.configured = List.copyOf(configured);
    this.store = store;
    this.clock = clock;
    this.probeInterval = probeInterval;
    this.probeTimeout = probeInterval.multipliedBy(2).compareTo(Duration.ofSeconds(1)) < 0
        ? Duration.ofSeconds(1) : probeInterval.multipliedBy(2);
    this.http = HttpClient.newBuilder().connectTimeout(probeTimeout).sslContext(trust.sslContext()).build();
    this.timer = timer;
  }

  /** Runs one discovery and probe round now (so the first calls have a view), then periodically. */
  ServerDirectory start() {
    refresh();
    timer.scheduleWithFixedDelay(this::refresh, probeInterval.toMillis(), probeInterval.toMillis(),
        TimeUnit.MILLISECONDS);
    return this;
  }

  /** The live servers, in no particular order. */
  List<String> live() {
    List<String> live = new ArrayList<>();
    for (String candidate : candidates) {
      if (Boolean.TRUE.equals(state.get(candidate))) {
        live.add(candidate);
      }
    }
    return live;
  }

  /** Every candidate and whether it is live, for {@code /lb/servers}. */
  Map<String, Boolean> view() {
    Map<String, Boolean> view = new TreeMap<>();
    for (String candidate : candidates) {
      view.put(candidate, Boolean.TRUE.equals(state.get(candidate)));
    }
    return view;
  }

  /** The proxy could not reach {@code address}: stop routing to it until a probe succeeds. */
  void markDown(String address) {
    if (state.replace(address, true, false)) {
      LOG.warn("server {} is down (connection failed); routing around it", address);
    }
  }

  private void refresh() {
    try {
      Set<String> next = new LinkedHashSet<>(configured);
      long now = clock.millis();
      if (store == null) {
        candidates = Set.copyOf(next);
      } else if (now - lastDiscoveryMs >= ServerRegistration.HEARTBEAT.toMillis()) {
        // Registrations change at most once a heartbeat: list storage that often, probe faster.
        lastDiscoveryMs = now;
        try {
          next.addAll(ServerRegistration.live(store, now));
        } catch (RuntimeException e) {
          // Storage unreachable: keep routing to the servers we know.
          LOG.warn("could not list registered servers: {}", e.getMessage());
          next.addAll(candidates);
        }
        candidates = Set.copyOf(next);
      } else {
        next.addAll(candidates);
      }
      state.keySet().retainAll(next);
      failures.keySet().retainAll(next);
      List<CompletableFuture<?>> probes = new ArrayList<>();
      for (String address : next) {
        probes.add(probe(address));
      }
      CompletableFuture.allOf(probes.toArray(CompletableFuture[]::new))
          .get(probeTimeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.debug("probe round incomplete: {}", e.toString());
    }
  }

  private CompletableFuture<?> probe(String address) {
    HttpRequest request = HttpRequest.newBuilder(URI.create(ServerRegistration.httpBase(address) + "/health"))
        .timeout(probeTimeout).GET().build();
    return http.sendAsync(request, HttpResponse.BodyHandlers.discarding())
        .handle((response, failure) -> {
          boolean ok = failure == null && response.statusCode() == 200;
          int failed = ok ? 0 : failures.merge(address, 1, Integer::sum);
          if (ok) {
            failures.remove(address);
          }
          boolean up = ok || (failed < FAILED_PROBES_TO_DOWN && !refused(failure) && state.get(address) != null
              && state.get(address));
          Boolean before = state.put(address, up);
          if (before == null || before != up) {
            if (up) {
              LOG.info("server {} is live", address);
            } else {
              LOG.warn("server {} is down ({})", address, failure != null ? failure.toString()
                  : "health answered " + response.statusCode());
            }
          }
          return null;
        });
  }

  /** Whether {@code failure} (or a cause) says nothing was listening: the server is surely down. */
  static boolean refused(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof java.net.ConnectException) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
