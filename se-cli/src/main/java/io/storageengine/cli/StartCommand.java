package io.storageengine.cli;

import io.storageengine.common.config.Setting;
import io.storageengine.server.BrokerProcess;
import io.storageengine.server.ConfigKey;
import io.storageengine.server.Role;
import io.storageengine.server.ServerConfig;
import io.storageengine.server.WorkerProcess;
import io.storageengine.server.lb.LoadBalancer;
import io.storageengine.common.SeException;
import java.util.List;
import picocli.CommandLine.Option;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code se start <role>}: the roles of a cluster, one per process. */
@Command(name = "start", mixinStandardHelpOptions = true, description = "Run one role of a cluster.",
    subcommands = {StartCommand.Server.class, StartCommand.Broker.class, StartCommand.Worker.class,
        StartCommand.Lb.class})
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
      return ProcessLifecycle.runUntilStopped(broker,
          "se broker: listening on " + config.serverAddress().getHostString() + ":" + broker.port());
    }
  }

  @Command(name = "worker", mixinStandardHelpOptions = true,
      description = {"Leases reconcile and maintenance tasks from the broker and runs them.",
          "Schedules a table's maintenance after its reconcile commits (at most once per --maintenance.interval)."})
  static final class Worker implements Callable<Integer>, ServerOptions.RoleSettings {
    @Mixin ServerOptions options;

    @Override
    public List<Setting<?>> roleSettings() {
      return List.of(ConfigKey.WORKER_CONCURRENCY.setting());
    }

    @Override
    public Integer call() throws Exception {
      ServerConfig config = options.resolve();
      int concurrency = config.integer(ConfigKey.WORKER_CONCURRENCY);
      WorkerProcess worker = WorkerProcess.start(config, concurrency);
      return ProcessLifecycle.runUntilStopped(worker, "se worker: running with concurrency " + concurrency);
    }
  }

  @Command(name = "lb", mixinStandardHelpOptions = true,
      description = {"A load balancer in front of the servers: Arrow Flight and HTTP on one listener.",
          "Each table's ingestion streams go to one live server (rendezvous hashing on catalog, namespace, table);",
          "other calls stick to a server per client connection. Servers are found in cluster storage",
          "(every `se start server` registers itself) and in --servers.",
          "Listens on --server.address (use a port other than the servers', e.g. 127.0.0.1:7770)."})
  static final class Lb implements Callable<Integer>, ServerOptions.RoleSettings {
    @Mixin ServerOptions options;

    @Override
    public List<Setting<?>> roleSettings() {
      return List.of(ConfigKey.LB_PROBE_INTERVAL.setting());
    }

    @Option(names = "--servers", split = ",", paramLabel = "HOST:PORT",
        description = "Servers to use besides the registered ones, comma-separated (https://host:port for a TLS server).")
    List<String> servers = List.of();


    @Override
    public Integer call() throws Exception {
      ServerConfig config = options.resolve();
      for (String server : servers) {
        if (!server.matches("(https://)?[^:/\\s]+:\\d{1,5}")) {
          throw SeException.invalid("--servers: expected host:port or https://host:port, got '%s'", server);
        }
      }
      LoadBalancer lb = LoadBalancer.start(config, servers, config.duration(ConfigKey.LB_PROBE_INTERVAL));
      return ProcessLifecycle.runUntilStopped(lb, "se lb: listening on " + config.serverAddress().getHostString()
          + ":" + lb.port() + ", live servers " + lb.liveServers());
    }
  }
}
