package io.storageengine.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.wal.ProducerStamp;
import io.storageengine.wal.ProducerWindows;
import io.storageengine.wal.TableName;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Stream opens share the producer windows' catch-ups of a table. */
class ProducerWindowCacheTest {
  static final Duration RETENTION = Duration.ofDays(7);
  static final TableWal TABLE = new TableWal("tenant", UUID.randomUUID());

  final ExecutorService threads = Executors.newCachedThreadPool();

  @AfterEach
  void stop() {
    threads.shutdownNow();
  }

  /**
   * A WAL whose catch-ups are counted; the n-th (from 1) waits for {@code gates.apply(n)} and
   * then answers windows in which producer {@code p} wrote sequence n (or throws {@code failure}
   * when it is the n-th).
   */
  static final class CountingWal implements WalWriter {
    final AtomicInteger calls = new AtomicInteger();
    final AtomicInteger concurrent = new AtomicInteger();
    final AtomicInteger mostConcurrent = new AtomicInteger();
    final IntFunction<CountDownLatch> gates;
    volatile int failOn = -1;

    CountingWal(IntFunction<CountDownLatch> gates) {
      this.gates = gates;
    }

    @Override
    public ProducerWindows catchUpProducerWindows(TableWal table, ProducerWindows known, Duration retention) {
      int n = calls.incrementAndGet();
      mostConcurrent.accumulateAndGet(concurrent.incrementAndGet(), Math::max);
      try {
        CountDownLatch gate = gates.apply(n);
        if (gate != null && !gate.await(10, TimeUnit.SECONDS)) {
          throw new AssertionError("gate of catch-up " + n + " never opened");
        }
        if (n == failOn) {
          throw new SeException(ErrorCode.UNAVAILABLE, "store down in catch-up " + n);
        }
        ProducerWindows windows = known == null ? new ProducerWindows() : known.copy();
        windows.admit(new ProducerStamp("p", n, System.currentTimeMillis()), n, 0, retention);
        return windows;
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      } finally {
        concurrent.decrementAndGet();
      }
    }

    @Override
    public long append(TableWal table, List<WalFrame> frames) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void registerTableName(TableWal table, TableName name) {
      throw new UnsupportedOperationException();
    }
  }

  /** Whether {@code t} waits inside the cache's open (for a catch-up, or in one). */
  static boolean waitsInOpen(Thread t) {
    Thread.State state = t.getState();
    if (state != Thread.State.WAITING && state != Thread.State.TIMED_WAITING) {
      return false;
    }
    for (StackTraceElement frame : t.getStackTrace()) {
      if (frame.getClassName().equals(ProducerWindowCache.class.getName())) {
        return true;
      }
    }
    return false;
  }

  /** Waits until {@code n} of {@code opened} wait inside the cache's open (the opens queued). */
  static void awaitWaiting(List<Thread> opened, int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      long waiting;
      synchronized (opened) {
        waiting = opened.stream().filter(ProducerWindowCacheTest::waitsInOpen).count();
      }
      if (waiting >= n) {
        return;
      }
      Thread.sleep(5);
    }
    throw new AssertionError("fewer than " + n + " opens are waiting");
  }

  /** Opens that started: the first one, which reads (blocked at its gate), then the ones queued behind it. */
  private record Burst(Future<?> first, List<Future<?>> queued) {}

  /**
   * Opens {@code TABLE} once, waits until that open reads (its catch-up's gate must hold it), then
   * opens it {@code more} times and waits until every one of them waits inside the cache.
   */
  private Burst openWhileOneReads(ProducerWindowCache cache, int more) throws InterruptedException {
    List<Thread> opened = new ArrayList<>();
    java.util.concurrent.Callable<Void> open = () -> {
      synchronized (opened) {
        opened.add(Thread.currentThread());
      }
      cache.open(TABLE, RETENTION);
      return null;
    };
    Future<?> first = threads.submit(open);
    awaitWaiting(opened, 1);
    List<Future<?>> queued = new ArrayList<>();
    for (int i = 0; i < more; i++) {
      queued.add(threads.submit(open));
    }
    awaitWaiting(opened, 1 + more);
    return new Burst(first, queued);
  }

  @Test
  void opensArrivingDuringACatchUpShareTheNextOneWhichStartsAfterThem() throws Exception {
    CountDownLatch first = new CountDownLatch(1);
    CountingWal wal = new CountingWal(n -> n == 1 ? first : null);
    ProducerWindowCache cache = new ProducerWindowCache(wal);
    Burst burst = openWhileOneReads(cache, 40);
    assertThat(wal.calls.get()).isEqualTo(1);
    first.countDown();
    burst.first().get(10, TimeUnit.SECONDS);
    for (Future<?> f : burst.queued()) {
      f.get(10, TimeUnit.SECONDS);
    }
    // One catch-up for the first open, one for the 40 that arrived while it read, never two at once.
    assertThat(wal.calls.get()).isEqualTo(2);
    assertThat(wal.mostConcurrent.get()).isEqualTo(1);
    // The 40 got the windows of the catch-up that started after they arrived.
    assertThat(cache.highestSequence(TABLE, "p", RETENTION)).hasValue(2);
    // An open after the burst reads again (segments may have come since).
    cache.open(TABLE, RETENTION);
    assertThat(wal.calls.get()).isEqualTo(3);
    assertThat(cache.highestSequence(TABLE, "p", RETENTION)).hasValue(3);
  }

  @Test
  void aFailedCatchUpFailsTheOpensThatWaitedForItAndTheNextOpenReadsAgain() throws Exception {
    CountDownLatch first = new CountDownLatch(1);
    CountDownLatch second = new CountDownLatch(1);
    CountingWal wal = new CountingWal(n -> n == 1 ? first : n == 2 ? second : null);
    wal.failOn = 2;
    ProducerWindowCache cache = new ProducerWindowCache(wal);
    Burst burst = openWhileOneReads(cache, 5);
    first.countDown();
    burst.first().get(10, TimeUnit.SECONDS);
    second.countDown();
    for (Future<?> f : burst.queued()) {
      assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(SeException.class)
          .satisfies(e -> assertThat(e.getCause()).hasMessageContaining("could not read the producer windows")
              .hasMessageContaining("store down in catch-up 2"));
    }
    assertThat(wal.calls.get()).isEqualTo(2);
    // The first catch-up's windows stay; the next open reads again and succeeds.
    assertThat(cache.highestSequence(TABLE, "p", RETENTION)).hasValue(1);
    cache.open(TABLE, RETENTION);
    assertThat(wal.calls.get()).isEqualTo(3);
    assertThat(cache.highestSequence(TABLE, "p", RETENTION)).hasValue(3);
  }
}
