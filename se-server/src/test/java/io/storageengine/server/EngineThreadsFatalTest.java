package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.testing.FaultInjectingObjectStore;
import io.storageengine.testing.FaultInjectingObjectStore.Operation;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The threads the roles' components start come from their {@link EngineContext}, so an
 * {@code Error} thrown in one (here: by the cluster storage, on that thread only) takes the
 * fatal-error path: the context is closed and the process exits non-zero.
 */
class EngineThreadsFatalTest {
  private static final String KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

  @TempDir Path dir;

  private final FaultInjectingObjectStore store = new FaultInjectingObjectStore(new MemoryObjectStore());
  private final CompletableFuture<Integer> exit = new CompletableFuture<>();
  /** The name of the thread the injected Error was thrown in. */
  private final AtomicReference<String> failedIn = new AtomicReference<>();

  private EngineContext context(boolean dev) {
    ServerConfig config = ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.SECRET_STORE_KEY, KEY)
        .with(ConfigKey.RECONCILE_INTERVAL, "50ms");
    return EngineContext.builder(config).store(store).devKey(dev).duckdbDirectory(config.duckdbDirectory())
        .exit(exit::complete).build();
  }

  /** Every storage call from a thread whose name matches {@code threads} throws an Error from now on. */
  private List<FaultInjectingObjectStore.Registration> failStorageCallsOf(Pattern threads) {
    List<FaultInjectingObjectStore.Registration> hooks = new ArrayList<>();
    for (Operation operation : Operation.values()) {
      hooks.add(store.before(operation, key -> true, (op, key) -> {
        String name = Thread.currentThread().getName();
        if (threads.matcher(name).matches()) {
          failedIn.compareAndSet(null, name);
          throw new StackOverflowError("test: a fatal failure in " + name);
        }
      }));
    }
    return hooks;
  }

  @Test
  void anErrorInTheReconcileLoopOfADevServerIsFatal() throws Exception {
    EngineContext context = context(true);
    try (EngineServer server = EngineServer.start(context, Role.DEV)) {
      assertThat(server.reconcileLoop()).isPresent();
      failStorageCallsOf(Pattern.compile("se-reconcile-\\d+"));

      assertThat(exit.get(60, TimeUnit.SECONDS)).isEqualTo(FatalErrors.EXIT_STATUS);
      assertThat(failedIn.get()).startsWith("se-reconcile-");
      assertThat(context.isClosed()).as("the fatal-error path closed the context").isTrue();
    }
  }

  @Test
  void anErrorInAWorkerThreadIsFatal() throws Exception {
    EngineContext context = context(false);
    // No broker: the lease thread keeps asking the storage where one is.
    try (WorkerProcess worker = WorkerProcess.start(context, 1)) {
      failStorageCallsOf(Pattern.compile("se-worker-\\d+"));

      assertThat(exit.get(60, TimeUnit.SECONDS)).isEqualTo(FatalErrors.EXIT_STATUS);
      assertThat(failedIn.get()).startsWith("se-worker-");
      assertThat(context.isClosed()).as("the fatal-error path closed the context").isTrue();
    }
  }
}
