package io.storageengine.reconcile.maintenance;

import java.util.List;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;

/**
 * Points in a maintenance pass where tests interleave other work (a reconcile commit racing a
 * compaction). The default does nothing.
 */
public interface MaintenanceHooks {
  MaintenanceHooks NONE = new MaintenanceHooks() {};

  /**
   * A compaction group's new files are written; its rewrite has not been committed yet.
   *
   * @param replaced the data files the rewrite replaces
   */
  default void beforeRewriteCommit(Table table, List<DataFile> replaced) {}
}
