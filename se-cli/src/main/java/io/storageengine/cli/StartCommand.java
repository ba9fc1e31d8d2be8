package io.storageengine.cli;

import io.storageengine.server.BrokerProcess;
import io.storageengine.server.Role;
import io.storageengine.server.ServerConfig;
import io.storageengine.server.WorkerProcess;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Option;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code se start <role>}: the roles of a cluster, one per process. */
@Command(name = "start", description = "Run one role of a cluster.",
    subcommands = {StartCommand.Server.class, StartCommand.Broker.class, StartCommand.Worker.class})
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

  @Command(name = "broker", mixinStandardHelpOptions = true,
      description = {"The task queue of distributed mode (broker/queue.json on cluster storage).",
          "A second broker takes over from the first; workers and servers find it through the queue object.",
          "Listens on --server.address (use a port other than the server's, e.g. 127.0.0.1:7778)."})
  static final class Broker implements Callable<Integer> {
    @Mixin ServerOptions options;

    @Override
    public Integer call() throws Exception {
      ServerConfig config = options.resolve();
      BrokerProcess broker = BrokerProcess.start(config);
      System.out.println("se broker: listening on " + config.serverAddress().getHostString() + ":" + broker.port());
      return awaitShutdown(broker);
    }
  }

  @Command(name = "worker", mixinStandardHelpOptions = true,
      description = "Leases reconcile tasks from the broker and runs them.")
  static final class Worker implements Callable<Integer> {
    @Mixin ServerOptions options;

    @Option(names = "--concurrency", defaultValue = "2", description = "Tasks run at once (default ${DEFAULT-VALUE})")
    int concurrency;

    @Override
    public Integer call() throws Exception {
      WorkerProcess worker = WorkerProcess.start(options.resolve(), concurrency);
      System.out.println("se worker: running with concurrency " + concurrency);
      return awaitShutdown(worker);
    }
  }

  static int awaitShutdown(AutoCloseable process) throws InterruptedException {
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        process.close();
      } catch (Exception e) {
        System.err.println("se: error while stopping: " + e);
      }
      stopped.countDown();
    }, "se-shutdown"));
    stopped.await();
    return 0;
  }
}
