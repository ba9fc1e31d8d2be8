package io.storageengine.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;

class ThreadsTest {
  @Test
  void callingThreadRunsEachTaskBeforeSubmitReturns() throws Exception {
    ExecutorService executor = Threads.callingThread();
    Thread caller = Thread.currentThread();
    Future<Thread> ran = executor.submit(Thread::currentThread);
    assertThat(ran.isDone()).isTrue();
    assertThat(ran.get()).isSameAs(caller);
  }

  @Test
  void callingThreadHandsATaskFailureToItsFuture() {
    Future<Object> failed = Threads.callingThread().submit(() -> {
      throw new IllegalStateException("boom");
    });
    assertThat(failed.isDone()).isTrue();
    assertThatThrownBy(failed::get).isInstanceOf(ExecutionException.class).hasRootCauseMessage("boom");
  }

  @Test
  void callingThreadRefusesTasksOnceShutDown() {
    ExecutorService executor = Threads.callingThread();
    executor.shutdown();
    assertThat(executor.isShutdown()).isTrue();
    assertThat(executor.isTerminated()).isTrue();
    assertThatThrownBy(() -> executor.execute(() -> { })).isInstanceOf(RejectedExecutionException.class);
  }
}
