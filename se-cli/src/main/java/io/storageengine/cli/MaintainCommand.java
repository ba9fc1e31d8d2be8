package io.storageengine.cli;

import io.storageengine.reconcile.maintenance.MaintenanceResult;
import io.storageengine.server.ReconcileRunner;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code se maintain}: one maintenance pass, reading cluster storage and the catalogs directly. */
@Command(name = "maintain", mixinStandardHelpOptions = true,
    description = {"Compact small files and fold deletion vectors, rewrite manifests, expire snapshots,",
        "delete orphan files, collect WAL segments and expired tombstones. One pass over every table",
        "(or one). `se dev` does this by itself every --maintenance.interval."})
final class MaintainCommand implements Callable<Integer> {
  @Mixin ServerOptions options;

  @Option(names = "--catalog-id", description = "Only this tenant's tables")
  String catalogId;

  @Option(names = "--table", paramLabel = "NS.TABLE", description = "Only this table (needs --catalog-id)")
  String table;

  @Override
  public Integer call() {
    try (ReconcileRunner runner = new ReconcileRunner(options.resolve())) {
      List<MaintenanceResult> results = runner.maintain(catalogId, table);
      int failed = 0;
      for (MaintenanceResult r : results) {
        System.out.println(r.tableName() + ": " + r.outcome().name().toLowerCase(java.util.Locale.ROOT)
            + (r.errors().isEmpty() ? "" : " " + r.errors()));
        if (r.outcome() == MaintenanceResult.Outcome.FAILED || r.outcome() == MaintenanceResult.Outcome.PARTIAL) {
          failed++;
        }
      }
      if (results.isEmpty()) {
        System.out.println("no tables to maintain");
      }
      return failed == 0 ? 0 : 1;
    }
  }
}
