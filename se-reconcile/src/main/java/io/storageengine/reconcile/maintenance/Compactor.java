package io.storageengine.reconcile.maintenance;

import io.storageengine.catalog.ManifestThreads;
import io.storageengine.catalog.TableSettings;
import io.storageengine.catalog.TableSlices;
import io.storageengine.common.SeException;
import io.storageengine.common.ThreadPriority;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.duckdb.SqlQuoting;
import io.storageengine.reconcile.Cleanup;
import io.storageengine.reconcile.CommitOutcome;
import io.storageengine.reconcile.CurrentRows;
import io.storageengine.reconcile.DataFileWriter;
import io.storageengine.reconcile.DuckSession;
import io.storageengine.reconcile.DuckSql;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.RewriteRebase;
import io.storageengine.reconcile.RewrittenRows;
import io.storageengine.reconcile.TableGate;
import io.storageengine.reconcile.WalMarks;
import io.storageengine.wal.TableWal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rewrites the small or delete-heavy data files of a partition into files near the target size,
 * with their deletion vectors applied, as one Iceberg {@code RewriteFiles} commit per group.
 *
 * <p>Safety against concurrent reconcile commits: the rewrite is validated from the snapshot it
 * was planned on, so if a reconcile pass deleted rows from one of its input files meanwhile (a
 * new deletion vector), the commit fails and the partition is planned again; a delete is never
 * lost. A reconcile pass that read an input file commits against it and fails in turn once the
 * rewrite landed ({@code validateDataFilesExist}), then restarts on the new files. Rows keep
 * their v3 lineage ({@code _row_id}, {@code _last_updated_sequence_number}), written explicitly.
 * The commit carries the table's {@code se.wal.seq} (and a sliced table's per-slice progress,
 * {@link WalMarks}) forward, and only onto the lineage it read it from: when just the marks
 * moved (a reconcile appended), the same files are committed again with the new marks. A
 * sliced table's files are grouped per partition and slice, and rewritten as files of their
 * slice.
 */
final class Compactor {
  private static final Logger LOG = LoggerFactory.getLogger(Compactor.class);
  /** Plans of a partition whose rewrite conflicted with row deletes, per pass. */
  static final int MAX_PLANS = 3;
  /** Commits of the same files when only the WAL high-water mark moved. */
  static final int MAX_MARK_RETRIES = 10;
  /** A group holds at most this many target sizes of input. */
  private static final long GROUP_TARGETS = 4;
  static final String STAGED = "compact_rows";
  /** Separates partition and slice in a group's key (no partition path holds it). */
  private static final String SLICE_SEPARATOR = "#slice=";

  private final BufferAllocator allocator;
  private final DuckRuntime duckdb;
  private final ReconcileOptions options;
  private final MaintenanceHooks hooks;

  Compactor(BufferAllocator allocator, DuckRuntime duckdb, ReconcileOptions options, MaintenanceHooks hooks) {
    this.allocator = allocator;
    this.duckdb = duckdb;
    this.options = options;
    this.hooks = hooks;
  }

  /**
   * The nice value (Linux) of the threads reading and writing a rewrite: below the demoted queries'
   * (10, {@code query.demoted-nice}), so that the foreground always goes first and a compaction
   * takes the cores it leaves.
   */
  static final int BACKGROUND_NICE = 15;

  /** A group read and written: its staged rows, their count, the new files and their local copies. */
  private record Written(Staged staged, long rows, List<DataFile> files, List<String> written,
      Map<String, java.nio.file.Path> locals, RewrittenRows keyRows) {}

  /**
   * Runs {@code work} on a new thread at nice {@link #BACKGROUND_NICE} and returns its result (the
   * thread ends after it: the OS does not raise a priority again); its exceptions and errors are
   * rethrown here. Interrupting the caller interrupts the work.
   */
  private static <T> T inBackground(java.util.concurrent.Callable<T> work) {
    java.util.concurrent.FutureTask<T> task = new java.util.concurrent.FutureTask<>(() -> {
      ThreadPriority.currentThreadId().ifPresent(id -> ThreadPriority.lower(List.of(id), BACKGROUND_NICE));
      return work.call();
    });
    Thread thread = new Thread(task, "se-compact");
    thread.setDaemon(true);
    thread.start();
    try {
      return task.get();
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(cause);
    } catch (InterruptedException e) {
      thread.interrupt();
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while compacting", e);
    }
  }

  /** One rewrite: files of one partition planned on one snapshot. */
  private record Group(String partition, List<FileScanTask> tasks) {}

  /**
   * Runs a rewrite's commit (true: committed) at once, or while no reconcile pass of the table
   * runs in this process.
   */
  interface CommitGate {
    boolean commit(java.util.function.BooleanSupplier commit);

    /**
     * Whether the rows of a rewrite's new files ({@code rows} in all) are wanted after its commit
     * ({@link #rewritten}): the rewrite then reads them while it still has its local copies.
     */
    default boolean wantsRows(long rows) {
      return false;
    }

    /** The rows of the files of a rewrite that committed, handed over within {@link #commit}. */
    default void rewritten(RewrittenRows rows) {
    }

    CommitGate NONE = java.util.function.BooleanSupplier::getAsBoolean;

    /**
     * Commits while no pass of {@code table} runs here ({@link TableGate#exclusive}), and hands the
     * new files' rows to the key index of those passes ({@link TableGate#rewritten}).
     */
    static CommitGate through(TableGate gate, TableWal table) {
      return new CommitGate() {
        @Override
        public boolean commit(java.util.function.BooleanSupplier commit) {
          return gate.exclusive(table, commit::getAsBoolean);
        }

        @Override
        public boolean wantsRows(long rows) {
          return gate.wantsRewrittenRows(table, rows);
        }

        @Override
        public void rewritten(RewrittenRows rows) {
          gate.rewritten(table, rows);
        }
      };
    }
  }

  /**
   * @param catalogId the tenant the table belongs to (whose cached data file copies are used)
   * @param gate where a rewrite of a table with row lineage commits (its reading and writing
   *     run outside, while passes go on: the rows they delete meanwhile are carried onto the new
   *     files, {@link RewriteRebase}); the caller holds a table without lineage for the whole
   *     compaction
   */
  MaintenanceResult.Compaction compact(String catalogId, Table table, MaintenancePolicy policy, CommitGate gate) {
    MaintenanceResult.Compaction total = MaintenanceResult.Compaction.NONE;
    Set<String> replan = null;
    for (int plan = 1; plan <= MAX_PLANS; plan++) {
      table.refresh();
      Snapshot start = table.currentSnapshot();
      if (start == null) {
        return total;
      }
      Set<String> conflicted = new java.util.HashSet<>();
      for (Group group : plan(table, start, policy, replan)) {
        MaintenanceResult.Compaction done = rewrite(catalogId, table, start, group, policy, gate);
        if (done.conflicts() > 0) {
          conflicted.add(group.partition());
        }
        total = total.plus(done);
      }
      if (conflicted.isEmpty()) {
        break;
      }
      replan = conflicted;
    }
    return total;
  }

  private List<Group> plan(Table table, Snapshot start, MaintenancePolicy policy, Set<String> only) {
    Map<String, List<FileScanTask>> byPartition = new LinkedHashMap<>();
    for (FileScanTask task : files(table, start)) {
      DataFile file = task.file();
      if (file.format() != FileFormat.PARQUET
          || task.deletes().stream().anyMatch(d -> d.content() == FileContent.EQUALITY_DELETES)) {
        continue; // equality deletes are not the engine's; leave such files to their writer
      }
      String partition = partitionKey(task);
      if (only != null && !only.contains(partition)) {
        continue;
      }
      if (file.fileSizeInBytes() < policy.smallFileBytes() || deleteHeavy(task, policy)) {
        byPartition.computeIfAbsent(partition, p -> new ArrayList<>()).add(task);
      }
    }
    List<Group> groups = new ArrayList<>();
    long maxBytes = Math.max(policy.targetFileSizeBytes(), policy.targetFileSizeBytes() * GROUP_TARGETS);
    for (Map.Entry<String, List<FileScanTask>> e : byPartition.entrySet()) {
      List<FileScanTask> bin = new ArrayList<>();
      long bytes = 0;
      for (FileScanTask task : e.getValue()) {
        if (!bin.isEmpty() && bytes + task.file().fileSizeInBytes() > maxBytes) {
          addIfWorthIt(groups, e.getKey(), bin, policy);
          bin = new ArrayList<>();
          bytes = 0;
        }
        bin.add(task);
        bytes += task.file().fileSizeInBytes();
      }
      addIfWorthIt(groups, e.getKey(), bin, policy);
    }
    return groups;
  }

  private static void addIfWorthIt(List<Group> groups, String partition, List<FileScanTask> bin,
      MaintenancePolicy policy) {
    boolean heavy = bin.stream().anyMatch(t -> deleteHeavy(t, policy));
    // A lone file without deletes would be rewritten into itself on every pass.
    if (heavy || (bin.size() >= policy.minInputFiles() && bin.size() > 1)) {
      groups.add(new Group(partition, List.copyOf(bin)));
    }
  }

  private static boolean deleteHeavy(FileScanTask task, MaintenancePolicy policy) {
    long deleted = 0;
    for (DeleteFile d : task.deletes()) {
      if (d.format() == FileFormat.PUFFIN) {
        deleted += d.recordCount();
      }
    }
    return deleted > 0 && deleted >= policy.deleteRatio() * task.file().recordCount();
  }

  /**
   * The group a file is compacted with: its partition and, on a sliced table, its slice (a
   * slice's files are rewritten into files of the same slice only).
   */
  private static String partitionKey(FileScanTask task) {
    String key = task.spec().specId() + ":" + task.spec().partitionToPath(task.file().partition());
    OptionalInt slice = TableSlices.sliceOfFile(task.file().location());
    return slice.isEmpty() ? key : key + SLICE_SEPARATOR + slice.getAsInt();
  }

  /** The slice of a group's key, or -1 for files of no slice. */
  private static int sliceOfGroup(String partitionKey) {
    int at = partitionKey.lastIndexOf(SLICE_SEPARATOR);
    return at < 0 ? -1 : Integer.parseInt(partitionKey.substring(at + SLICE_SEPARATOR.length()));
  }

  private MaintenanceResult.Compaction rewrite(String catalogId, Table table, Snapshot start, Group group,
      MaintenancePolicy policy, CommitGate gate) {
    List<DataFile> inputs = new ArrayList<>();
    // Deletion vectors of the inputs go with them. Other position delete files may cover more
    // data files, so they stay (their positions are applied to the rewritten rows all the same).
    Map<String, DeleteFile> vectors = new LinkedHashMap<>();
    long inputRows = 0;
    for (FileScanTask task : group.tasks()) {
      inputs.add(task.file());
      inputRows += task.file().recordCount();
      for (DeleteFile d : task.deletes()) {
        if (d.format() == FileFormat.PUFFIN) {
          vectors.put(d.location() + "#" + d.contentOffset(), d);
        }
      }
    }
    boolean lineage = TableUtil.formatVersion(table) >= 3;
    long rows;
    int added;
    boolean committed;
    long carried = 0;
    try (BufferAllocator child = allocator.newChildAllocator("compact-" + table.uuid(), 0, Long.MAX_VALUE);
        DuckSession duck = new DuckSession(duckdb, child, options.duckdbThreads(), catalogId, BACKGROUND_NICE)) {
      // Reading and writing the group, most of a compaction's work, yield the cores to the
      // foreground (passes, folds, queries, ingestion): a thread of their own at a low priority,
      // on DuckDB's background database.
      long planned = inputRows;
      Written made = inBackground(() -> {
        Staged staged = stage(duck, table, group.tasks(), lineage);
        if (staged.rows() != planned) {
          throw SeException.internal("table " + table.name() + ": compaction read " + staged.rows() + " rows from "
              + inputs.size() + " data files whose metadata counts " + planned, null);
        }
        long count = duck.queryLong("SELECT count(*) FROM " + STAGED);
        DataFileWriter writer = new DataFileWriter(duck, table,
            options.withTargetFileSize(policy.targetFileSizeBytes(), options.rowGroupRows()));
        if (sliceOfGroup(group.partition()) >= 0) {
          writer.forSlice(sliceOfGroup(group.partition()));
        }
        Map<String, java.nio.file.Path> locals = new LinkedHashMap<>();
        writer.beforePublish(locals::put);
        try {
          List<DataFile> out = writer.write(STAGED, lineage
              ? List.of(MetadataColumns.ROW_ID, MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER) : List.of(),
              defaultOrder(table, lineage));
          // For the key index of this process's passes, while the copies are local and the
          // passes go on (they would read the new files back after the commit).
          long reading = System.nanoTime();
          RewrittenRows keyRows = lineage && gate.wantsRows(count) && RewrittenRows.indexable(table)
              ? RewrittenRows.read(duck, table, locals) : null;
          LOG.debug("compaction of {}: {}", table.name(), keyRows == null ? "no rows read for a key index"
              : "read " + keyRows.rows() + " rows of its new files for the key index in "
                  + (System.nanoTime() - reading) / 1_000_000 + " ms");
          return new Written(staged, count, out, List.copyOf(writer.writtenLocations()), locals, keyRows);
        } catch (RuntimeException e) {
          Cleanup.deleteQuietly(table.io(), writer.writtenLocations());
          throw e;
        }
      });
      Staged staged = made.staged();
      rows = made.rows();
      List<DataFile> files = made.files();
      List<String> written = made.written();
      Map<String, java.nio.file.Path> locals = made.locals();
      added = files.size();
      hooks.beforeRewriteCommit(table, inputs);
      if (lineage) {
        Map<DataFile, java.nio.file.Path> writtenFrom = new LinkedHashMap<>();
        files.forEach(f -> writtenFrom.put(f, locals.get(f.location())));
        RewriteRebase.Carry carry = new RewriteRebase.Carry(duck, table, STAGED, staged.files(), writtenFrom);
        // The rows the passes deleted so far are carried while they go on; holding them back, the
        // commit carries only what the commits since then deleted.
        long carrying = System.nanoTime();
        table.refresh();
        String conflict = carry.advance(files(table, table.currentSnapshot()));
        if (conflict == null) {
          hooks.afterRewriteCarried(table, inputs);
        }
        long waited = System.nanoTime();
        long before = carry.rows();
        if (conflict != null) {
          committed = gaveWay(table, written, conflict);
        } else {
          committed = gate.commit(() -> {
            long entered = System.nanoTime();
            boolean done = commitCarrying(table, start, carry, inputs, files, written);
            if (done && made.keyRows() != null) {
              gate.rewritten(made.keyRows());
            }
            LOG.debug("compaction commit of {}: {} ms carrying {} deleted rows, {} ms waiting for the table's passes, "
                + "{} ms carrying {} more and committing", table.name(), (waited - carrying) / 1_000_000, before,
                (entered - waited) / 1_000_000, (System.nanoTime() - entered) / 1_000_000, carry.rows() - before);
            return done;
          });
        }
        carried = carry.rows();
      } else {
        committed = commit(table, start, inputs, vectors.values(), files, written);
      }
    }
    if (!committed) {
      return new MaintenanceResult.Compaction(0, 0, 0, 0, 0, 1, 0);
    }
    LOG.info("compacted {} partition '{}': {} data files and {} deletion vectors into {} files, {} rows{}",
        table.name(), group.partition(), inputs.size(), vectors.size(), added, rows,
        carried > 0 ? " (" + carried + " deleted meanwhile, carried onto the new files)" : "");
    return new MaintenanceResult.Compaction(1, inputs.size(), added, vectors.size(), rows, 0, carried);
  }

  /**
   * Commits a rewrite onto the table's current snapshot, with the rows deleted from its inputs
   * since {@code start} (by reconcile passes that went on while it read and wrote) deleted from
   * the new files too ({@code carry}, brought to each snapshot it tries); the inputs' current
   * deletion vectors go with them. True when committed; false when it cannot be carried (an input
   * is gone or got other deletes) or kept conflicting.
   */
  private boolean commitCarrying(Table table, Snapshot start, RewriteRebase.Carry carry, List<DataFile> inputs,
      List<DataFile> added, List<String> written) {
    java.util.Set<String> inputLocations = new java.util.HashSet<>();
    inputs.forEach(f -> inputLocations.add(f.location()));
    for (int attempt = 1; ; attempt++) {
      table.refresh();
      Snapshot base = table.currentSnapshot();
      List<FileScanTask> now = files(table, base);
      String conflict = carry.advance(now);
      if (conflict != null) {
        return gaveWay(table, written, conflict);
      }
      List<DeleteFile> vectors = carry.vectors();
      List<String> vectorFiles = vectors.stream().map(DeleteFile::location).distinct().toList();
      Map<String, String> marks = WalMarks.carried(table);
      RewriteFiles rewrite = ManifestThreads.commit(CommitOutcome.checkingLanded(table).newRewrite(), table, base)
          .validateFromSnapshot(base.snapshotId());
      inputs.forEach(rewrite::deleteFile);
      for (FileScanTask task : now) {
        if (inputLocations.contains(task.file().location())) {
          task.deletes().forEach(rewrite::deleteFile); // one vector each (else carry found a conflict)
        }
      }
      added.forEach(rewrite::addFile);
      vectors.forEach(rewrite::addFile);
      WalMarks.carry(rewrite, marks);
      rewrite.validateWith(WalMarks.expecting(marks));
      try {
        rewrite.commit();
        return true;
      } catch (RuntimeException e) {
        if (landedAnyway(table, start, written, e)) {
          return true;
        }
        if ((e instanceof ValidationException || e instanceof CommitFailedException) && attempt < MAX_MARK_RETRIES) {
          Cleanup.deleteQuietly(table.io(), vectorFiles); // carried again onto the next snapshot
          continue;
        }
        if (e instanceof ValidationException || e instanceof CommitFailedException || CommitOutcome.cleanable(e)) {
          Cleanup.deleteQuietly(table.io(), vectorFiles);
          if (!(e instanceof ValidationException || e instanceof CommitFailedException)) {
            Cleanup.deleteQuietly(table.io(), written);
            throw SeException.unavailable("table " + table.name() + ": compaction commit failed: "
                + e.getClass().getSimpleName(), e);
          }
          return gaveWay(table, written, e.getMessage());
        }
        throw unknownOutcome(table, e);
      }
    }
  }

  /**
   * A rewrite that conflicted with a concurrent commit gives way: known not committed, its new
   * files ({@code written}) are unreferenced and deleted. Returns false (not committed).
   */
  private static boolean gaveWay(Table table, List<String> written, String conflict) {
    Cleanup.deleteQuietly(table.io(), written);
    LOG.info("compaction of {} conflicted with a concurrent commit: {}", table.name(), conflict);
    return false;
  }

  /** Every data file of {@code snapshot} with its deletes. */
  private static List<FileScanTask> files(Table table, Snapshot snapshot) {
    return ManifestThreads.tasks(table, snapshot, scan -> scan);
  }

  /** True when committed; false when a concurrent commit deleted rows from the inputs. */
  private boolean commit(Table table, Snapshot start, List<DataFile> inputs, java.util.Collection<DeleteFile> vectors,
      List<DataFile> added, List<String> written) {
    table.refresh();
    Map<String, String> marks = WalMarks.carried(table);
    for (int attempt = 1; ; attempt++) {
      RewriteFiles rewrite = ManifestThreads.commit(CommitOutcome.checkingLanded(table).newRewrite(), table,
          table.currentSnapshot()).validateFromSnapshot(start.snapshotId());
      inputs.forEach(rewrite::deleteFile);
      vectors.forEach(rewrite::deleteFile);
      added.forEach(rewrite::addFile);
      WalMarks.carry(rewrite, marks);
      rewrite.validateWith(WalMarks.expecting(marks));
      try {
        rewrite.commit();
        return true;
      } catch (RuntimeException e) {
        if (landedAnyway(table, start, written, e)) {
          return true;
        }
        if (e instanceof ValidationException || e instanceof CommitFailedException) {
          Map<String, String> now = WalMarks.carried(table);
          if (!now.equals(marks) && attempt < MAX_MARK_RETRIES) {
            marks = now; // only a reconcile commit landed: same files, new mark
            continue;
          }
          return gaveWay(table, written, e.getMessage());
        }
        if (CommitOutcome.cleanable(e)) {
          Cleanup.deleteQuietly(table.io(), written);
          throw SeException.unavailable("table " + table.name() + ": compaction commit failed: "
              + e.getClass().getSimpleName(), e);
        }
        // Not in the table, but it might still land: leave the files to orphan cleanup.
        throw unknownOutcome(table, e);
      }
    }
  }

  /**
   * Whether a rewrite whose commit threw {@code e} landed all the same, decided from the reloaded
   * table (its files are in a snapshot since {@code start}), not from the exception; throws
   * UNAVAILABLE when the table cannot be read to tell.
   */
  private static boolean landedAnyway(Table table, Snapshot start, List<String> written, RuntimeException e) {
    boolean landed;
    try {
      table.refresh();
      landed = CommitOutcome.added(table, start.snapshotId(), written);
    } catch (RuntimeException reload) {
      e.addSuppressed(reload);
      throw SeException.unavailable("table " + table.name() + ": compaction commit failed ("
          + e.getClass().getSimpleName() + ") and the table could not be read to tell whether it landed ("
          + reload.getMessage() + "); its files are kept", e);
    }
    if (landed) {
      LOG.warn("compaction commit of {} reported {} but landed; counted as done", table.name(),
          e.getClass().getSimpleName());
    }
    return landed;
  }

  /** The error of a rewrite whose commit's outcome is unknown and whose files are not in the table. */
  private static SeException unknownOutcome(Table table, RuntimeException e) {
    return SeException.unavailable("table " + table.name() + ": outcome of the compaction commit is unknown ("
        + e.getClass().getSimpleName() + ") and its files are not in the table; they are kept for orphan "
        + "cleanup", e);
  }

  static String defaultOrder(Table table, boolean lineage) {
    boolean entity = TableSettings.of(table).entity();
    Schema schema = table.schema();
    if (entity && !schema.identifierFieldIds().isEmpty()) {
      List<String> keys = new ArrayList<>();
      for (Integer id : schema.identifierFieldIds()) {
        keys.add(SqlQuoting.identifier(schema.findField(id).name()));
      }
      return String.join(", ", keys); // clustered keys make reconcile's key lookups prune well
    }
    return lineage ? SqlQuoting.identifier(MetadataColumns.ROW_ID.name()) : null; // arrival order
  }

  /**
   * Rows staged by {@link #stage}.
   *
   * @param rows the rows read before deletes were applied
   * @param files the files read (their local paths, the staged {@code __file}, and deletes)
   */
  record Staged(long rows, CurrentRows files) {}

  /**
   * Loads the live rows of {@code tasks} into {@value #STAGED}: the current columns (matched by
   * field id), the lineage columns (explicit values, else inherited from the file) and the
   * rows' file and position.
   */
  static Staged stage(DuckSession duck, Table table, List<FileScanTask> tasks, boolean lineage) {
    Schema schema = table.schema();
    List<String> defs = new ArrayList<>();
    for (Types.NestedField c : schema.columns()) {
      defs.add(SqlQuoting.identifier(c.name()) + " " + DuckSql.type(c.type()));
    }
    if (lineage) {
      defs.add(SqlQuoting.identifier(MetadataColumns.ROW_ID.name()) + " BIGINT");
      defs.add(SqlQuoting.identifier(MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER.name()) + " BIGINT");
    }
    defs.add("__file VARCHAR");
    defs.add("__pos BIGINT");
    duck.execute("CREATE OR REPLACE TEMP TABLE " + STAGED + " (" + String.join(", ", defs) + ")");
    CurrentRows current = new CurrentRows(duck, table, tasks);
    current.insertInto(STAGED, fileSchema -> {
      List<String> exprs = new ArrayList<>();
      for (Types.NestedField c : schema.columns()) {
        exprs.add(CurrentRows.column(fileSchema, c));
      }
      if (lineage) {
        exprs.add(CurrentRows.rowId(fileSchema));
        exprs.add(CurrentRows.lastUpdatedSequence(fileSchema));
      }
      return String.join(", ", exprs) + ", r.filename, r.file_row_number";
    }, fileSchema -> CurrentRows.JOIN_FILES);
    long staged = duck.queryLong("SELECT count(*) FROM " + STAGED);
    current.removeAllDeleted(STAGED);
    return new Staged(staged, current);
  }
}
