package io.storageengine.reconcile.maintenance;

import io.storageengine.reconcile.SliceMeta;
import java.util.List;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;

/**
 * Points in a maintenance pass where tests interleave other work (a reconcile commit racing a
 * compaction) or inject failures (each hook may throw to simulate a crash at that point). The
 * default does nothing.
 */
public interface MaintenanceHooks {
  MaintenanceHooks NONE = new MaintenanceHooks() {};

  /**
   * A compaction group's new files are written; its rewrite has not been committed yet.
   *
   * @param replaced the data files the rewrite replaces
   */
  default void beforeRewriteCommit(Table table, List<DataFile> replaced) {}

  /**
   * A rewrite of a table with row lineage carried the rows deleted from its inputs so far onto
   * its new files, while reconcile passes go on; its commit (which carries the rest) has not
   * started.
   */
  default void afterRewriteCarried(Table table, List<DataFile> replaced) {}

  /** A split or merge is recorded as pending in the slices-meta; nothing is written yet. */
  default void afterSliceProposal(Table table, SliceMeta.Change change) {}

  /** The new slices' files are written; the Iceberg commit has not started. */
  default void beforeSliceCommit(Table table, SliceMeta.Change change) {}

  /** The Iceberg commit of the change landed; the slices-meta has not been settled yet. */
  default void afterSliceCommit(Table table, SliceMeta.Change change) {}
}
