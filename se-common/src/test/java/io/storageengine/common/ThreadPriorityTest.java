package io.storageengine.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Lowering single threads of this process, checked in the kernel's own view of them. */
class ThreadPriorityTest {
  @BeforeAll
  static void linuxOnly() {
    Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "thread priorities are Linux only");
  }

  @Test
  void aThreadLoweredHasTheNiceValueAndOthersKeepTheirs() throws Exception {
    AtomicLong id = new AtomicLong();
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(1);
    Thread lowered = new Thread(() -> {
      id.set(ThreadPriority.currentThreadId().orElseThrow());
      started.countDown();
      await(done);
    }, "se-lowered-test");
    lowered.start();
    started.await();
    try {
      long self = ThreadPriority.currentThreadId().orElseThrow();
      assertThat(id.get()).isNotEqualTo(self);
      assertThat(Files.isDirectory(Path.of("/proc/self/task/" + id.get()))).isTrue();
      long before = ThreadPriority.nice(self).orElseThrow();
      Assumptions.assumeTrue(before < 7, "this process already runs at nice " + before);
      assertThat(ThreadPriority.lower(List.of(id.get()), 7)).isTrue();
      assertThat(ThreadPriority.nice(id.get())).hasValue(7);
      assertThat(ThreadPriority.nice(self)).hasValue(before);
      // Its kernel name is its Java name (cut to 15 bytes): native threads it starts inherit it.
      assertThat(ThreadPriority.threadsNamed("se-lowered-test")).containsExactly(id.get());
    } finally {
      done.countDown();
      lowered.join();
    }
    // The kernel task outlives the Java thread's end by a moment.
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (ThreadPriority.nice(id.get()).isPresent() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(ThreadPriority.nice(id.get())).isEmpty();
    assertThat(ThreadPriority.lower(List.of(id.get()), 7)).as("a thread that ended").isFalse();
  }

  @Test
  void nothingToLowerOrANiceOutOfRange() {
    assertThat(ThreadPriority.lower(List.of(), 10)).isFalse();
    assertThat(ThreadPriority.threadsNamed("no-such-thread")).isEmpty();
    assertThatThrownBy(() -> ThreadPriority.lower(List.of(1L), 0)).hasMessageContaining("1..19");
    assertThatThrownBy(() -> ThreadPriority.lower(List.of(1L), 20)).hasMessageContaining("1..19");
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
