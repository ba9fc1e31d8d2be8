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

  @Option(names = "--split-slice", paramLabel = "ID",
      description = "Instead of a pass: split this slice of the sliced entity table --table at the midpoint "
          + "of its hash range now, online (maintenance splits slices above 2x se.slice.target-rows by itself)")
  Integer splitSlice;

  @Override
  public Integer call() {
    try (ReconcileRunner runner = new ReconcileRunner(options.resolve())) {
      if (splitSlice != null) {
        java.util.Optional<String> change = runner.splitSlice(catalogId, table, splitSlice);
        System.out.println(table + ": " + change.orElse("slices changed meanwhile; nothing split, try again"));
        return change.isPresent() ? 0 : 1;
      }
      List<MaintenanceResult> results = runner.maintain(catalogId, table);
      int failed = 0;
      for (MaintenanceResult r : results) {
        System.out.println(r.tableName() + ": " + r.outcome().name().toLowerCase(java.util.Locale.ROOT)
            + (r.sliceChanges().isEmpty() ? "" : " " + r.sliceChanges())
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
