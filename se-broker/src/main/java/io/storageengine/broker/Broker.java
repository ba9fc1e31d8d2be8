package io.storageengine.broker;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.common.Threads;
import io.storageengine.objectstore.ObjectStore;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The task broker (ARCHITECTURE.md section 9): the queue in memory, persisted to
 * {@code broker/queue.json}.
 *
 * <p>Fencing: {@link #start} bumps the stored epoch by compare-and-swap and records this
 * broker's address. Every later write is a CAS on the etag this broker last wrote, so once
 * another broker takes over, this one's next write fails, it stops serving, and every call
 * answers UNAVAILABLE "not the active broker".
 *
 * <p>Group commit: a request changes the in-memory queue and then waits; one committer thread
 * collects changes for {@code commitDelay} and writes the queue once for all of them. A request
 * returns only after a write covering its change landed. Requests that changed nothing still
 * wait for the committer to confirm (by a {@code head}) that this broker is still the active
 * one, so a fenced broker never answers from stale state.
 *
 * <p>If a write fails for a storage reason, the waiting requests fail UNAVAILABLE, but their
 * changes stay in memory and go out with the next write: schedules are idempotent by key, and
 * a lease whose grant was lost simply expires.
 */
public final class Broker implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Broker.class);
  private static final int START_ATTEMPTS = 10;

  private final ObjectStore store;
  private final BrokerConfig config;
  private final Clock clock;
  private final ThreadFactory threads;
  private final Object lock = new Object();

  // Guarded by lock.
  private TaskQueueState state;
  private List<CompletableFuture<Void>> waiters = new ArrayList<>();
  private boolean running;
  private String fencedReason;

  // Owned by the committer thread after start.
  private long epoch;
  private String address;
  private String lastEtag;
  private Thread committer;
  private volatile long writes;

  /** A broker whose commit thread is a daemon named {@code se-broker-commit}. */
  public Broker(ObjectStore store, BrokerConfig config, Clock clock) {
    this(store, config, clock, Threads.daemonNamed("se-broker-commit"));
  }

  /**
   * @param threads makes the commit thread (a process's composition root passes threads whose
   *     uncaught throwables take its fatal-error path)
   */
  public Broker(ObjectStore store, BrokerConfig config, Clock clock, ThreadFactory threads) {
    this.store = store;
    this.config = config;
    this.clock = clock;
    this.threads = threads;
  }

  /**
   * Takes over the queue: reads it (or creates it), writes it back with the epoch bumped and
   * {@code address} (how workers reach this broker, e.g. {@code http://10.0.0.5:7000}) recorded,
   * and starts serving.
   */
  public void start(String address) {
    if (address == null || address.isBlank()) {
      throw SeException.invalid("broker address must not be empty");
    }
    synchronized (lock) {
      if (running || fencedReason != null) {
        throw new SeException(ErrorCode.CONFLICT, "broker already started");
      }
    }
    for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
      Optional<ObjectStore.Blob> current = store.get(QueueDocument.KEY);
      QueueDocument previous = current.map(b -> QueueDocument.parse(b.data()))
          .orElse(new QueueDocument(0, null, List.of()));
      QueueDocument mine = new QueueDocument(previous.epoch() + 1, address, previous.tasks());
      Optional<String> etag = current.isEmpty()
          ? store.putIfAbsent(QueueDocument.KEY, mine.toBytes())
          : store.putIfMatch(QueueDocument.KEY, mine.toBytes(), current.get().etag());
      if (etag.isPresent()) {
        this.epoch = mine.epoch();
        this.address = address;
        this.lastEtag = etag.get();
        synchronized (lock) {
          state = new TaskQueueState(mine.tasks(), config.retry());
          running = true;
        }
        committer = threads.newThread(this::commitLoop);
        committer.start();
        LOG.info("broker active at {} with epoch {} ({} tasks in {})", address, epoch,
            mine.tasks().size(), store.describe());
        return;
      }
      // Lost a race with another broker or a concurrent write; read again.
    }
    throw new SeException(ErrorCode.CONFLICT,
        "could not take over " + QueueDocument.KEY + ": it kept changing during " + START_ATTEMPTS + " attempts");
  }

  /** Schedules a task; see {@link TaskQueueState#schedule}. */
  public ScheduleOutcome schedule(String key, String kind, Map<String, String> payload) {
    return execute(s -> s.schedule(key, kind, payload, clock.millis()));
  }

  /** Leases up to {@code max} tasks of the given kinds (any when empty) to {@code worker}. */
  public LeaseGrant lease(String worker, Set<String> kinds, int max) {
    long leaseMs = config.leaseDuration().toMillis();
    return execute(s -> new LeaseGrant(leaseMs, s.lease(worker, kinds, max, leaseMs, clock.millis())));
  }

  /** Extends a held lease; returns its new expiry (epoch millis). CONFLICT when it is lost. */
  public long heartbeat(String key, String leaseId) {
    return execute(s -> s.heartbeat(key, leaseId, config.leaseDuration().toMillis(), clock.millis()));
  }

  /** Acknowledges a lease; see {@link TaskQueueState#ack}. */
  public AckOutcome ack(String key, String leaseId, boolean success, String error, Long retryAfterMs) {
    return execute(s -> s.ack(key, leaseId, success, error, retryAfterMs, clock.millis()));
  }

  /** The queue as this broker holds it, after confirming it is still the active broker. */
  public QueueDocument snapshot() {
    return execute(s -> {
      s.expireLeases(clock.millis());
      return new QueueDocument(epoch, address, s.tasks());
    });
  }

  /** True while this broker serves: started, not fenced by a newer broker, not closed. */
  public boolean isActive() {
    synchronized (lock) {
      return running;
    }
  }

  /** Epoch this broker holds (0 before start). */
  public long epoch() {
    return epoch;
  }

  /** Number of queue writes since start (group commit makes it smaller than the request count). */
  public long writes() {
    return writes;
  }

  @Override
  public void close() {
    synchronized (lock) {
      if (running) {
        running = false;
        fencedReason = "broker is shut down";
      }
      lock.notifyAll();
    }
    Thread t = committer;
    if (t != null) {
      try {
        t.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private <T> T execute(Function<TaskQueueState, T> operation) {
    CompletableFuture<Void> committed = new CompletableFuture<>();
    T result;
    synchronized (lock) {
      checkServing();
      result = operation.apply(state);
      waiters.add(committed);
      lock.notifyAll();
    }
    try {
      committed.get();
      return result;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw SeException.unavailable("interrupted while waiting for the queue commit", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof SeException se) {
        throw new SeException(se.code(), se.getMessage(), se);
      }
      throw SeException.internal("queue commit failed", e.getCause());
    }
  }

  private void checkServing() {
    if (fencedReason != null) {
      throw new SeException(ErrorCode.UNAVAILABLE, "not the active broker: " + fencedReason);
    }
    if (!running) {
      throw new SeException(ErrorCode.UNAVAILABLE, "not the active broker: not started");
    }
  }

  private void commitLoop() {
    while (true) {
      List<CompletableFuture<Void>> batch;
      byte[] document = null;
      synchronized (lock) {
        while (waiters.isEmpty() && running) {
          try {
            lock.wait();
          } catch (InterruptedException e) {
            return;
          }
        }
        if (!running) {
          failAll(waiters, new SeException(ErrorCode.UNAVAILABLE, "not the active broker: " + fencedReason));
          waiters = new ArrayList<>();
          return;
        }
      }
      sleepQuietly(config.commitDelay().toMillis());
      synchronized (lock) {
        batch = waiters;
        waiters = new ArrayList<>();
        if (state.takeDirty()) {
          document = new QueueDocument(epoch, address, state.tasks()).toBytes();
        }
      }
      try {
        if (document != null) {
          write(document);
        } else {
          confirmActive();
        }
        batch.forEach(f -> f.complete(null));
      } catch (FencedException e) {
        fence(e.getMessage());
        failAll(batch, new SeException(ErrorCode.UNAVAILABLE, "not the active broker: " + e.getMessage()));
      } catch (RuntimeException e) {
        LOG.warn("queue write failed; retrying with the next commit: {}", e.getMessage());
        synchronized (lock) {
          if (document != null) {
            state.markDirty();
          }
        }
        failAll(batch, SeException.unavailable("queue commit failed: " + e.getMessage(), e));
      }
    }
  }

  private void write(byte[] document) {
    Optional<String> etag = store.putIfMatch(QueueDocument.KEY, document, lastEtag);
    if (etag.isEmpty()) {
      // Either another broker took over, or an earlier write of ours landed but its
      // response was lost. Only this broker writes its epoch, so the epoch tells which.
      adoptOwnWriteOrFence();
      etag = store.putIfMatch(QueueDocument.KEY, document, lastEtag);
      if (etag.isEmpty()) {
        adoptOwnWriteOrFence();
        throw SeException.unavailable("queue.json changed during the write; retrying", null);
      }
    }
    lastEtag = etag.get();
    writes++;
  }

  private void confirmActive() {
    Optional<ObjectStore.ObjectInfo> info = store.head(QueueDocument.KEY);
    if (info.isEmpty() || !info.get().etag().equals(lastEtag)) {
      adoptOwnWriteOrFence();
    }
  }

  private void adoptOwnWriteOrFence() {
    Optional<ObjectStore.Blob> current = store.get(QueueDocument.KEY);
    if (current.isEmpty()) {
      throw new FencedException(QueueDocument.KEY + " was deleted");
    }
    QueueDocument stored = QueueDocument.parse(current.get().data());
    if (stored.epoch() != epoch) {
      throw new FencedException("broker at " + stored.brokerAddress() + " took over with epoch "
          + stored.epoch() + " (this broker had epoch " + epoch + ")");
    }
    lastEtag = current.get().etag();
  }

  private void fence(String reason) {
    LOG.warn("broker at {} stops serving: {}", address, reason);
    synchronized (lock) {
      running = false;
      fencedReason = reason;
      failAll(waiters, new SeException(ErrorCode.UNAVAILABLE, "not the active broker: " + reason));
      waiters = new ArrayList<>();
    }
  }

  private static void failAll(List<CompletableFuture<Void>> futures, SeException e) {
    futures.forEach(f -> f.completeExceptionally(e));
  }

  private static void sleepQuietly(long ms) {
    if (ms <= 0) {
      return;
    }
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Another broker owns the queue now. */
  private static final class FencedException extends RuntimeException {
    FencedException(String message) {
      super(message, null, false, false);
    }
  }
}
