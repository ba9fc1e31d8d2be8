package io.storageengine.reconcile.maintenance;

import io.storageengine.reconcile.CommitOutcome;
import io.storageengine.reconcile.WalMarks;
import org.apache.iceberg.RewriteManifests;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.ValidationException;

/**
 * Rewrites the data manifests of the current snapshot into few large ones (clustered by
 * partition spec) once there are more than the policy allows, so scan planning opens few files.
 * The commit carries {@code se.wal.seq} forward onto the lineage it was read from only.
 */
final class ManifestRewriter {
  private ManifestRewriter() {}

  /** Returns {before, after}: manifests (data and delete) of the current snapshot. */
  static int[] rewrite(Table table, MaintenancePolicy policy) {
    table.refresh();
    Snapshot current = table.currentSnapshot();
    if (current == null) {
      return new int[] {0, 0};
    }
    int before = current.allManifests(table.io()).size();
    if (current.dataManifests(table.io()).size() <= policy.maxManifests()) {
      return new int[] {before, before};
    }
    for (int attempt = 1; ; attempt++) {
      java.util.Map<String, String> marks = WalMarks.carried(table);
      RewriteManifests rewrite = CommitOutcome.checkingLanded(table).rewriteManifests()
          .clusterBy(file -> file.specId());
      WalMarks.carry(rewrite, marks);
      rewrite.validateWith(WalMarks.expecting(marks));
      try {
        rewrite.commit();
        break;
      } catch (ValidationException e) {
        // A reconcile commit moved the mark: rewrite again on top of it.
        table.refresh();
        if (attempt >= Compactor.MAX_MARK_RETRIES) {
          throw e;
        }
      }
    }
    table.refresh();
    return new int[] {before, table.currentSnapshot().allManifests(table.io()).size()};
  }
}
