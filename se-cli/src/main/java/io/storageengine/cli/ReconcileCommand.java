package io.storageengine.cli;

import io.storageengine.reconcile.ReconcileResult;
import io.storageengine.server.ConfigKey;
import io.storageengine.server.ReconcileRunner;
import io.storageengine.server.ServerConfig;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code se reconcile}: publish pending WAL to Iceberg, once or continuously. */
@Command(name = "reconcile", mixinStandardHelpOptions = true,
    description = {"Publish acknowledged WAL segments to their Iceberg tables, reading cluster storage directly.",
        "Pairs with `se start server` (which only writes the WAL). One pass by default; --watch keeps going."})
final class ReconcileCommand implements Callable<Integer> {
  @Mixin ServerOptions options;

  @Option(names = "--catalog-id", description = "Only this tenant's tables")
  String catalogId;

  @Option(names = "--table", paramLabel = "NS.TABLE", description = "Only this table (needs --catalog-id)")
  String table;

  @Option(names = "--watch", description = "Keep reconciling every --reconcile.interval until stopped")
  boolean watch;

  @Override
  public Integer call() throws Exception {
    ServerConfig config = options.resolve();
    try (ReconcileRunner runner = new ReconcileRunner(config)) {
      if (watch) {
        runner.watch(catalogId, config.duration(ConfigKey.RECONCILE_INTERVAL), ReconcileCommand::print);
        return 0;
      }
      List<ReconcileResult> results = runner.once(catalogId, table);
      int failed = 0;
      for (ReconcileResult r : results) {
        print(r);
        if (r.outcome() == ReconcileResult.Outcome.FAILED) {
          failed++;
        }
      }
      if (results.isEmpty()) {
        System.out.println("nothing to reconcile");
      }
      return failed == 0 ? 0 : 1;
    }
  }

  static void print(ReconcileResult r) {
    String name = r.tableName() == null ? r.table().toString() : r.table().catalogId() + "." + r.tableName();
    switch (r.outcome()) {
      case COMMITTED -> System.out.printf("%s: committed WAL %d..%d: %d rows written, %d removed, %d files, %d deletion vectors%n",
          name, r.fromSeq(), r.toSeq(), r.rowsWritten(), r.rowsRemoved(), r.dataFiles(), r.deleteVectors());
      case UP_TO_DATE -> System.out.printf("%s: up to date%n", name);
      case TABLE_DROPPED -> System.out.printf("%s: table dropped; WAL skipped%n", name);
      case FAILED -> System.out.printf("%s: FAILED: %s%n", name, r.message());
    }
  }
}
