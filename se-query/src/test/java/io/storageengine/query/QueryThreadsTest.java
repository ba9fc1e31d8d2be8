package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ThreadPriority;
import io.storageengine.common.Threads;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** A query's worker thread: its work runs there, a lowered one is never lent again. */
class QueryThreadsTest {
  final QueryThreads threads = new QueryThreads(Threads.daemon("se-query-run-test"));

  @AfterEach
  void tearDown() {
    threads.close();
  }

  @Test
  void aQuerysWorkRunsOnItsOwnThreadAndTheIdleWorkerServesTheNextQuery() throws Exception {
    Thread first;
    try (QueryThreads.Worker worker = threads.take()) {
      first = worker.call(Thread::currentThread);
      assertThat(first).isNotSameAs(Thread.currentThread());
      assertThat(worker.call(Thread::currentThread)).as("every call of the query").isSameAs(first);
      try (QueryThreads.Worker other = threads.take()) {
        assertThat(other.call(Thread::currentThread)).as("a query running at the same time").isNotSameAs(first);
      }
    }
    assertThat(threads.idleCount()).isEqualTo(2);
    try (QueryThreads.Worker next = threads.take()) {
      assertThat(next.call(Thread::currentThread)).as("the most recently used").isSameAs(first);
    }
  }

  @Test
  void theWorksExceptionsReachTheCaller() {
    try (QueryThreads.Worker worker = threads.take()) {
      assertThatThrownBy(() -> worker.call(() -> {
        throw new IOException("batch failed");
      })).isInstanceOf(IOException.class).hasMessage("batch failed");
      assertThatThrownBy(() -> worker.call(() -> {
        throw new IllegalStateException("bad state");
      })).isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(() -> worker.call(() -> {
        throw new AssertionError("an error");
      })).isInstanceOf(AssertionError.class);
    }
  }

  @Test
  void anInterruptedCallerStillWaitsForTheWorkAndKeepsItsInterrupt() throws Exception {
    try (QueryThreads.Worker worker = threads.take()) {
      Thread.currentThread().interrupt();
      long started = System.nanoTime();
      assertThat(worker.call(() -> {
        Thread.sleep(100);
        return "done";
      })).isEqualTo("done");
      assertThat(System.nanoTime() - started).isGreaterThanOrEqualTo(100_000_000L);
      assertThat(Thread.interrupted()).isTrue();
    }
  }

  @Test
  void aLoweredWorkersThreadRunsAtTheNiceValueAndEndsWhenGivenBack() throws Exception {
    Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "thread priorities are Linux only");
    AtomicReference<Thread> lowered = new AtomicReference<>();
    long id;
    try (QueryThreads.Worker worker = threads.take()) {
      lowered.set(worker.call(Thread::currentThread));
      id = worker.threadId().orElseThrow();
      worker.lowerPriority(11);
      assertThat(ThreadPriority.nice(id)).hasValue(11);
      assertThat(worker.call(() -> ThreadPriority.nice(ThreadPriority.currentThreadId().orElseThrow())))
          .hasValue(11);
    }
    lowered.get().join(10_000);
    assertThat(lowered.get().isAlive()).as("the lowered thread ended").isFalse();
    assertThat(threads.idleCount()).isZero();
    try (QueryThreads.Worker next = threads.take()) {
      long nextId = next.call(() -> ThreadPriority.currentThreadId().orElseThrow());
      assertThat(ThreadPriority.nice(nextId)).as("a new thread, not lowered").hasValue(ThreadPriority.nice(
          ThreadPriority.currentThreadId().orElseThrow()).orElseThrow());
    }
  }

  @Test
  void aWorkerLoweredBeforeItsFirstWorkIsLoweredWhenThatRuns() throws Exception {
    Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "thread priorities are Linux only");
    try (QueryThreads.Worker worker = threads.take()) {
      worker.lowerPriority(12);
      assertThat(worker.call(() -> ThreadPriority.nice(ThreadPriority.currentThreadId().orElseThrow())))
          .hasValue(12);
    }
  }
}
