package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.objectstore.MemoryObjectStore;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.Test;

/** What an {@link EngineContext} owns and how it ends: in order, once, and on a fatal error. */
class EngineContextTest {
  private static final String KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

  private static EngineContext context(CompletableFuture<Integer> exit) {
    return EngineContext.builder(ServerConfig.defaults().with(ConfigKey.SECRET_STORE_KEY, KEY))
        .store(new MemoryObjectStore())
        .exit(exit::complete)
        .build();
  }

  @Test
  void anErrorInAnOwnedThreadClosesTheContextAndExitsNonZero() throws Exception {
    CompletableFuture<Integer> exit = new CompletableFuture<>();
    EngineContext context = context(exit);
    AutoCloseable[] closedBeforeExit = {null};
    context.own((AutoCloseable) () -> closedBeforeExit[0] = () -> {});

    Thread thread = context.threads("se-test-fatal").newThread(() -> {
      throw new OutOfMemoryError("test: out of memory");
    });
    assertThat(thread.getName()).isEqualTo("se-test-fatal-1");
    assertThat(thread.isDaemon()).isTrue();
    thread.start();

    assertThat(exit.get(30, TimeUnit.SECONDS)).isEqualTo(FatalErrors.EXIT_STATUS).isNotZero();
    assertThat(context.isClosed()).isTrue();
    assertThat(closedBeforeExit[0]).as("what a role registered was closed before the exit").isNotNull();
  }

  @Test
  void anErrorKeptByAPoolTaskIsFatalButAnExceptionStaysTheSubmitters() throws Exception {
    CompletableFuture<Integer> exit = new CompletableFuture<>();
    EngineContext context = context(exit);
    var pool = context.scheduler("se-test-pool");

    var ordinary = pool.submit(() -> {
      throw new IllegalStateException("test: an ordinary failure");
    });
    assertThatThrownBy(() -> ordinary.get(30, TimeUnit.SECONDS)).hasRootCauseMessage("test: an ordinary failure");
    pool.schedule(() -> "still running", 0, TimeUnit.MILLISECONDS).get(30, TimeUnit.SECONDS);
    assertThat(exit).isNotDone();
    assertThat(context.isClosed()).isFalse();

    pool.submit(() -> {
      throw new StackOverflowError("test: a fatal failure");
    });
    assertThat(exit.get(30, TimeUnit.SECONDS)).isEqualTo(FatalErrors.EXIT_STATUS);
    assertThat(context.isClosed()).isTrue();
  }

  @Test
  void closingClosesTheSubsystemAllocatorsOnceAndAfterWhatRolesRegistered() {
    CompletableFuture<Integer> exit = new CompletableFuture<>();
    EngineContext context = context(exit);
    BufferAllocator ingest = context.allocator(EngineContext.Subsystem.INGEST);
    assertThat(ingest.getName()).isEqualTo("ingest");
    assertThat(ingest.getLimit()).isPositive();
    // A role's buffer, released by the role's close: the allocator is only closed after it.
    ArrowBuf buffer = ingest.buffer(1024);
    context.own((AutoCloseable) buffer::close);

    context.close();
    context.close();

    assertThat(ingest.getAllocatedMemory()).isZero();
    assertThat(context.isClosed()).isTrue();
    assertThat(exit).isNotDone();
  }
}
