package io.storageengine.reconcile;

import io.storageengine.catalog.TableSlices;
import io.storageengine.common.SeException;
import io.storageengine.wal.TableWal;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A pass over a whole sliced table: one pass per slice, on up to as many threads as the machine
 * has cores, their results summed into one. The slices' passes are independent (own progress,
 * own files, own commit); one that fails does not undo the others, and the first failure is
 * thrown once all have ended.
 */
final class SlicedPasses {
  private static final AtomicInteger THREADS = new AtomicInteger();

  private final TableReconciler whole;
  private final List<TableSlices.Slice> slices;

  /** @param slices the slices of the table's current snapshot */
  SlicedPasses(TableReconciler whole, List<TableSlices.Slice> slices) {
    this.whole = whole;
    this.slices = List.copyOf(slices);
  }

  ReconcileResult run(TableWal tableWal, String tableName) {
    int threads = Math.min(slices.size(), Math.max(1, Runtime.getRuntime().availableProcessors()));
    List<ReconcileResult> results = new ArrayList<>();
    RuntimeException failure = null;
    if (threads == 1) {
      for (TableSlices.Slice s : slices) {
        try {
          results.add(whole.forSlice(s.id()).run(tableWal));
        } catch (RuntimeException e) {
          failure = failure == null ? e : failure;
        }
      }
    } else {
      ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
        Thread t = new Thread(r, "se-reconcile-slice-" + THREADS.incrementAndGet());
        t.setDaemon(true);
        return t;
      });
      try {
        List<Future<ReconcileResult>> futures = new ArrayList<>();
        for (TableSlices.Slice s : slices) {
          futures.add(pool.submit(() -> whole.forSlice(s.id()).run(tableWal)));
        }
        for (Future<ReconcileResult> f : futures) {
          try {
            results.add(f.get());
          } catch (ExecutionException e) {
            RuntimeException cause = e.getCause() instanceof RuntimeException r ? r
                : SeException.internal("slice pass failed", e.getCause());
            failure = failure == null ? cause : failure;
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw SeException.unavailable("interrupted while slices of " + tableName + " were reconciled", e);
          }
        }
      } finally {
        pool.shutdownNow();
      }
    }
    if (failure != null) {
      throw failure;
    }
    return sum(tableWal, tableName, results);
  }

  static ReconcileResult sum(TableWal tableWal, String tableName, List<ReconcileResult> results) {
    ReconcileResult.Outcome outcome = ReconcileResult.Outcome.UP_TO_DATE;
    long from = Long.MAX_VALUE;
    long to = 0;
    long walRows = 0;
    long written = 0;
    long removed = 0;
    int dataFiles = 0;
    int vectors = 0;
    int attempts = 1;
    int committed = 0;
    for (ReconcileResult r : results) {
      if (r.outcome() == ReconcileResult.Outcome.TABLE_DROPPED) {
        return r;
      }
      if (r.outcome() == ReconcileResult.Outcome.COMMITTED) {
        outcome = r.outcome();
        committed++;
        from = Math.min(from, r.fromSeq());
      }
      to = Math.max(to, r.toSeq());
      walRows += r.walRows();
      written += r.rowsWritten();
      removed += r.rowsRemoved();
      dataFiles += r.dataFiles();
      vectors += r.deleteVectors();
      attempts = Math.max(attempts, r.attempts());
    }
    return new ReconcileResult(tableWal, tableName, outcome, committed == 0 ? 0 : from, to, walRows, written,
        removed, dataFiles, vectors, attempts, committed + " of " + results.size() + " slices committed");
  }
}
