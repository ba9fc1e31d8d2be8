package io.storageengine.cli;

import io.storageengine.server.ClusterStorage;
import io.storageengine.server.ConfigKey;
import io.storageengine.server.EngineServer;
import io.storageengine.server.Role;
import io.storageengine.server.ServerConfig;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code se dev}: every role in one process with embedded defaults. */
@Command(name = "dev", mixinStandardHelpOptions = true,
    description = {"Run everything in one process with embedded defaults: the listener on 127.0.0.1:7777,",
        "an fs object store under ./.se, and the embedded catalog 'warehouse'. Ctrl-C stops it."})
final class DevCommand implements Callable<Integer> {
  @Mixin ServerOptions options;

  @Override
  public Integer call() throws Exception {
    // First start: generate the file secret store's key into the data dir (mode 0600).
    ServerConfig config = ClusterStorage.withDevKey(options.resolve());
    if (!config.get(ConfigKey.SECRET_STORE_FILE_KEY_FILE).isBlank()) {
      System.out.println("se dev: secrets encrypted with the key in " + config.get(ConfigKey.SECRET_STORE_FILE_KEY_FILE));
    }
    return runUntilStopped(config, Role.DEV);
  }

  /** Starts the engine and blocks until the JVM is asked to stop (Ctrl-C, SIGTERM). */
  static int runUntilStopped(ServerConfig config, Role role) throws InterruptedException {
    EngineServer server = EngineServer.launch(config, role);
    return ProcessLifecycle.runUntilStopped(server, "se " + role.name().toLowerCase(java.util.Locale.ROOT)
        + ": listening on " + config.serverAddress().getHostString() + ":" + server.port()
        + " (HTTP and Arrow Flight); data in " + config.objectStoreRoot() + ". Ctrl-C to stop.");
  }
}
