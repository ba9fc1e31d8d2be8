package io.storageengine.ingest;

import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.common.Threads;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalWriter;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * One {@link TableCommitter} per table WAL, all flushing on one pool. The table's name is
 * registered next to its WAL before its committer is created, outside the map's lock, so the
 * storage round trip never holds up the streams of other tables; the first streams of a table
 * may each write it (a hint, last writer wins, all write the same). The committer of a table
 * found dropped is forgotten (its streams fail NOT_FOUND).
 */
final class GroupCommitter implements AutoCloseable {
  private final WalWriter wal;
  private final TenantCatalogs catalogs;
  private final TableResolver tables;
  private final IngestListener listener;
  private final IngestConfig config;
  private final ScheduledThreadPoolExecutor executor;
  private final ConcurrentHashMap<TableWal, TableCommitter> committers = new ConcurrentHashMap<>();

  /** Flushing on daemon threads named {@code se-ingest-flush-N}. */
  GroupCommitter(WalWriter wal, TenantCatalogs catalogs, IngestListener listener, IngestConfig config) {
    this(wal, catalogs, listener, config, Threads.daemon("se-ingest-flush"));
  }

  /**
   * @param threads makes the flush threads; an {@code Error} a flush throws goes to the thread's
   *     uncaught-exception handler
   */
  GroupCommitter(WalWriter wal, TenantCatalogs catalogs, IngestListener listener,
      IngestConfig config, ThreadFactory threads) {
    this(wal, catalogs, new TableResolver(catalogs), listener, config, threads);
  }

  /**
   * @param tables how the segments' tables are found again before their batches are
   *     acknowledged (the ingest service's own, so stream opens and flushes share what it knows)
   */
  GroupCommitter(WalWriter wal, TenantCatalogs catalogs, TableResolver tables, IngestListener listener,
      IngestConfig config, ThreadFactory threads) {
    this.wal = wal;
    this.catalogs = catalogs;
    this.tables = tables;
    this.listener = listener;
    this.config = config;
    this.executor = Threads.scheduledPool(config.flushThreads(), threads);
    this.executor.setRemoveOnCancelPolicy(true);
  }

  /** The committer of {@code target}'s table, created (and its name registered) on first use. */
  TableCommitter committer(IngestTarget target) {
    TableCommitter existing = committers.get(target.wal());
    if (existing != null) {
      return existing;
    }
    try {
      wal.registerTableName(target.wal(), target.tableName());
      return committers.computeIfAbsent(target.wal(), table -> {
        TableCommitter[] self = new TableCommitter[1];
        self[0] = new TableCommitter(table, wal, executor, listener, config,
            new TableIdentityCheck(catalogs, tables, target), () -> committers.remove(table, self[0]));
        return self[0];
      });
    } catch (SeException e) {
      if (e.code() != ErrorCode.UNAVAILABLE) {
        throw e;
      }
      throw new SeException(ErrorCode.UNAVAILABLE, "storage unavailable: could not register "
          + "table `" + target.displayName() + "`: " + e.getMessage() + "; retry", e);
    } catch (RuntimeException e) {
      throw new SeException(ErrorCode.UNAVAILABLE,
          "storage unavailable: could not register table `" + target.displayName() + "`", e);
    }
  }

  /** The committer of {@code table}, if this process has one. */
  Optional<TableCommitter> existing(TableWal table) {
    return Optional.ofNullable(committers.get(table));
  }

  /** Flushes every table, then stops the pool. */
  @Override
  public void close() {
    committers.values().forEach(TableCommitter::close);
    executor.shutdown();
    try {
      executor.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
