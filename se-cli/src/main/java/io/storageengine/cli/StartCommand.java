package io.storageengine.cli;

import io.storageengine.server.Role;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code se start <role>}: the roles of a cluster, one per process. */
@Command(name = "start", description = "Run one role of a cluster.",
    subcommands = {StartCommand.Server.class})
final class StartCommand {

  @Command(name = "server", mixinStandardHelpOptions = true,
      description = {"The listener (HTTP API, Iceberg REST facade, Flight ingestion, Flight SQL).",
          "Ingestion persists to the WAL only; run `se reconcile` to publish it to Iceberg."})
  static final class Server implements Callable<Integer> {
    @Mixin ServerOptions options;

    @Override
    public Integer call() throws Exception {
      return DevCommand.runUntilStopped(options.resolve(), Role.SERVER);
    }
  }
}
