package io.storageengine.reconcile;

import io.storageengine.duckdb.SqlQuoting;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBAppender;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An entity pass's use of its table's key index ({@link KeyIndex}): the current rows of the
 * batch's keys are looked up in the index and handed to DuckDB as {@link BatchCurrentRows#TABLE},
 * instead of being found by joining the keys with the key column of every candidate file (which
 * reads every file when a batch's keys are spread over the key space).
 *
 * <p>For tables whose primary key is one INTEGER or LONG column and whose version column, if
 * any, is INTEGER, LONG, DATE or TIMESTAMP with or without zone (values an index holds as a
 * {@code long}); other
 * tables read the files. A pass, in order:
 *
 * <ol>
 *   <li>{@link #load}: takes the index from {@link KeyIndexes}; uses it if it describes the
 *       planned files (applying the previous pass's pending change if that commit landed), else
 *       builds it from every file, once, if that reads no more than the candidate files would
 *       (at least half their rows are candidates) and it fits the memory budget; then looks the
 *       keys up and puts the index back (nothing changes it until {@link #pend}, so a query's
 *       WAL tail fold may look its keys up meanwhile);</li>
 *   <li>{@link #written}: each data file the pass writes is read back (key, version, row id,
 *       position: the pass's own rows, before they are published);</li>
 *   <li>{@link #pend}: takes the index again (none if it was dropped meanwhile); the keys whose
 *       rows the pass replaced or deleted, the written rows and the file set after the commit
 *       become the index's pending change;</li>
 *   <li>{@link #release}: the index goes back to {@link KeyIndexes}.</li>
 * </ol>
 */
final class KeyIndexReads {
  private static final Logger LOG = LoggerFactory.getLogger(KeyIndexReads.class);
  /**
   * How long a WAL tail fold waits for the index while a pass holds it, before it reads the files
   * instead: a pass holds it for its lookup and to record its change (0.1-0.3 s under 50 k
   * upserts/s on a 10 M-key table), where reading a segment's keys' rows from the files took
   * 0.3-1.6 s; and a fold starts when a segment arrives, as the pass that reconciles it does.
   */
  static final long READER_WAIT_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(500);
  private static final String HITS = "index_hits";
  private static final String HIT_FILES = "index_files";

  private final DuckSession duck;
  private final Table table;
  private final EntityColumns columns;
  private final Types.NestedField key;
  private final Types.NestedField version;
  private final KeyIndexes indexes;
  private final KeyIndexes.Key cacheKey;
  private final List<KeyIndex.WrittenFile> written = new ArrayList<>();
  /** The index while this pass holds it (null: not used). */
  private KeyIndex index;
  /** Whether this pass has the index's loan ({@link KeyIndexes#take}) to end. */
  private boolean taken;

  private KeyIndexReads(DuckSession duck, Table table, EntityColumns columns, KeyIndexes indexes, int slice) {
    this.duck = duck;
    this.table = table;
    this.columns = columns;
    this.key = columns.keys().get(0);
    this.version = columns.version();
    this.indexes = indexes;
    this.cacheKey = new KeyIndexes.Key(duck.scope(), table.uuid(), slice);
  }

  /**
   * The index reads of a pass over {@code table} (of slice {@code slice}, -1 for the whole
   * table), or null when its columns' types have no index or no index may be kept.
   */
  static KeyIndexReads of(DuckSession duck, Table table, EntityColumns columns, KeyIndexes indexes, int slice) {
    return indexes.budgetBytes() > 0 && supported(columns)
        ? new KeyIndexReads(duck, table, columns, indexes, slice) : null;
  }

  /** Whether an index can hold the rows of a table with these entity columns. */
  static boolean supported(EntityColumns columns) {
    if (columns.keys().size() != 1 || !integral(columns.keys().get(0))) {
      return false;
    }
    Types.NestedField v = columns.version();
    return v == null || (!columns.schema().identifierFieldIds().contains(v.fieldId()) && (integral(v)
        || v.type().typeId() == org.apache.iceberg.types.Type.TypeID.DATE
        || v.type().typeId() == org.apache.iceberg.types.Type.TypeID.TIMESTAMP));
  }

  private static boolean integral(Types.NestedField c) {
    return switch (c.type().typeId()) {
      case INTEGER, LONG -> true;
      default -> false;
    };
  }

  /**
   * For a fold of an entity table's WAL tail onto a snapshot (a query's read of its own writes):
   * fills {@link BatchCurrentRows#TABLE} with the current rows of the keys in {@code keysTable}
   * from the table's key index (a sliced table's: the index of each of its slices, each
   * describing that slice's files), and returns the files they are in; null (read the files)
   * when an index is missing or describes other files, a pass holds one for longer than
   * {@link #READER_WAIT_NANOS} in all, or a background sync holds one. A reader never builds,
   * brings along or drops an index: that is the passes' work.
   *
   * @param sliceIds the snapshot's slices (null: the table is not sliced)
   * @param snapshotFiles plans every data file of the snapshot; called only once the indexes are held
   * @param newerFiles null when the indexes must describe the snapshot's files; else plans the
   *     files of a newer snapshot whose rows of these keys are the snapshot's, in the same files
   *     at the same positions (the caller's proof), which the indexes must describe instead and
   *     which must hold every file of the snapshot
   * @param anyCandidates whether a data file's key bounds overlap the keys (else none is looked up)
   */
  static CurrentRows shared(DuckSession duck, Table table, EntityColumns columns, KeyIndexes indexes,
      List<Integer> sliceIds, Supplier<List<FileScanTask>> snapshotFiles, Supplier<List<FileScanTask>> newerFiles,
      boolean anyCandidates, String keysTable) {
    if (indexes == null || indexes.budgetBytes() == 0 || !supported(columns)) {
      return null;
    }
    KeyIndexReads reads = new KeyIndexReads(duck, table, columns, indexes, -1);
    long started = System.nanoTime();
    Map<KeyIndexes.Key, KeyIndex> held = new LinkedHashMap<>();
    KeyIndexes.Key unusable = null;
    try {
      for (int slice : sliceIds == null ? List.of(-1) : sliceIds) {
        KeyIndexes.Key key = new KeyIndexes.Key(duck.scope(), table.uuid(), slice);
        KeyIndex index = indexes.tryTake(key, Math.max(0, started + READER_WAIT_NANOS - System.nanoTime()));
        if (index == null) {
          LOG.debug("{}: WAL tail fold without a key index: none kept{}, or a pass or sync held it", table.name(),
              slice < 0 ? "" : " of slice " + slice);
          return null;
        }
        held.put(key, index);
      }
      List<FileScanTask> all = snapshotFiles.get();
      if (sliceIds != null && !ofSlices(all, sliceIds)) {
        LOG.debug("{}: WAL tail fold without a key index: a data file of no slice of the snapshot", table.name());
        return null;
      }
      boolean newer = newerFiles != null;
      List<FileScanTask> newerAll = newer ? newerFiles.get() : null;
      for (Map.Entry<KeyIndexes.Key, KeyIndex> e : held.entrySet()) {
        int slice = e.getKey().slice();
        Map<String, String> fileSet = KeyIndex.fileSet(slice < 0 ? all : SliceFiles.of(all, slice));
        Map<String, String> described = !newer ? fileSet
            : KeyIndex.fileSet(slice < 0 ? newerAll : SliceFiles.of(newerAll, slice));
        unusable = e.getKey(); // applying a pending change may outgrow the budget
        boolean describes = described.keySet().containsAll(fileSet.keySet()) && e.getValue().describes(described);
        unusable = null;
        if (!describes) {
          LOG.debug("{}: WAL tail fold without a key index: it describes other files", table.name());
          return null;
        }
      }
      CurrentRows rows;
      try {
        rows = reads.lookup(new ArrayList<>(held.values()), all, anyCandidates ? keysTable : null);
      } catch (UnplannedFile e) {
        if (!newer) {
          throw e;
        }
        LOG.debug("{}: WAL tail fold without a key index: {}", table.name(), e.getMessage());
        return null; // not the snapshot's row after all: read the files
      }
      indexes.read();
      LOG.debug("{}: WAL tail fold looked its keys up in the key {}{} in {} ms", table.name(),
          sliceIds == null ? "index" : "indexes of " + sliceIds.size() + " slices",
          newer ? " of a newer snapshot" : "", (System.nanoTime() - started) / 1_000_000);
      return rows;
    } catch (KeyIndex.Unusable e) {
      return null; // a pending change outgrew the budget: that index is dropped
    } finally {
      for (Map.Entry<KeyIndexes.Key, KeyIndex> e : held.entrySet()) {
        if (e.getKey().equals(unusable)) {
          indexes.giveUp(e.getKey());
        } else {
          indexes.give(e.getKey(), e.getValue());
        }
      }
    }
  }

  /** Whether every file of {@code tasks} belongs to one of the slices {@code sliceIds} (their indexes hold it). */
  private static boolean ofSlices(List<FileScanTask> tasks, List<Integer> sliceIds) {
    for (FileScanTask t : tasks) {
      java.util.OptionalInt slice = io.storageengine.catalog.TableSlices.sliceOfFile(t.file().location());
      if (slice.isEmpty() || !sliceIds.contains(slice.getAsInt())) {
        return false;
      }
    }
    return true;
  }

  /** A key index's row in a file the lookup's snapshot does not have. */
  static final class UnplannedFile extends IllegalStateException {
    UnplannedFile(String message) {
      super(message);
    }
  }

  /**
   * Fills {@link BatchCurrentRows#TABLE} with the current rows of the keys in {@code keysTable}
   * from the index, and returns the files those rows are in (whose deletion vectors the pass
   * rewrites); null when the index is not used and the pass reads {@code candidates} itself.
   *
   * @param all every data file of the table (or slice) at the pass's base snapshot
   * @param candidates the ones whose key bounds overlap the batch's keys
   */
  CurrentRows load(List<FileScanTask> all, List<FileScanTask> candidates, String keysTable) {
    long started = System.nanoTime();
    Map<String, String> fileSet = KeyIndex.fileSet(all);
    boolean built = false;
    if (indexes.syncing(cacheKey)) {
      // Only a pass of this table starts a sync, and passes of a table run one at a time.
      LOG.debug("{}: key index being synced in the background; the pass reads the files", table.name());
      return null;
    }
    index = take();
    try {
      if (index != null && !index.matches(fileSet)) {
        if (syncsLong(index, all, fileSet)) {
          // Most of a sync is reading the rows of files new to the index (a compaction's, say):
          // that runs on a thread of its own, and the passes until it ends read the files.
          KeyIndex handed = index;
          index = null;
          taken = false;
          indexes.syncInBackground(cacheKey, handed, session ->
              new KeyIndexReads(session, table, columns, indexes, cacheKey.slice()).sync(handed, all, fileSet));
          LOG.debug("{}: key index handed to a background sync; the pass reads the files", table.name());
          return null;
        }
        if (!sync(index, all, fileSet)) {
          LOG.debug("{}: key index does not describe the planned files; dropped", table.name());
          index = null;
        }
      }
      if (index == null) {
        long rows = rows(all);
        if (2 * rows(candidates) < rows || !indexes.reserve(KeyIndex.bytesFor(rows, version != null))) {
          return null;
        }
        index = build(all, fileSet, rows);
        built = true;
      }
    } catch (KeyIndex.Unusable e) {
      LOG.debug("{}: no key index: {}", table.name(), e.getMessage());
      index = null;
      return null;
    } catch (RuntimeException e) {
      index = null; // half synced or built: never given back
      throw e;
    }
    long lookedUp = System.nanoTime();
    // No candidate file: no key of the batch has a row (a load of new keys), nothing to look up.
    CurrentRows files = lookup(all, candidates.isEmpty() ? null : keysTable);
    indexes.used(built);
    // Nothing changes the index until the pass records its change (pend): readers (a query's
    // WAL tail fold, whose snapshot the index describes now) may look their keys up meanwhile.
    indexes.give(cacheKey, index);
    taken = false;
    LOG.debug("{}: key index of {} keys {} in {} ms, lookup in {} ms", table.name(), index.size(),
        built ? "built" : "reused", (lookedUp - started) / 1_000_000, (System.nanoTime() - lookedUp) / 1_000_000);
    return files;
  }

  private static long rows(List<FileScanTask> tasks) {
    long rows = 0;
    for (FileScanTask t : tasks) {
      rows += t.file().recordCount();
    }
    return rows;
  }

  /** An index of the live rows of every file of {@code all}. */
  private KeyIndex build(List<FileScanTask> all, Map<String, String> fileSet, long rows) {
    long started = System.nanoTime();
    KeyIndex built = new KeyIndex(fileSet, version != null, rows, indexes.budgetBytes());
    long allocated = System.nanoTime();
    addRows(built, all);
    LOG.debug("{}: key index built from {} files in {} ms (allocating {} ms)", table.name(), all.size(),
        (System.nanoTime() - started) / 1_000_000, (allocated - started) / 1_000_000);
    return built;
  }

  /**
   * Brings {@code stale} (describing another file set) to {@code fileSet} (of {@code all}) by
   * what changed, reading only the files new to it (a build reads them all): the keys of files
   * no longer planned (rewritten by compaction, say) and of rows newly deleted by a changed
   * deletion vector are removed, found in one pass over the index, and the rows of the new
   * files are added. False (the index is unusable) when a file's deletes changed to something
   * other than one deletion vector.
   */
  private boolean sync(KeyIndex stale, List<FileScanTask> all, Map<String, String> fileSet) {
    long started = System.nanoTime();
    stale.settle(fileSet);
    Map<String, String> old = stale.files();
    List<FileScanTask> added = new ArrayList<>();
    List<FileScanTask> changed = new ArrayList<>();
    for (FileScanTask t : all) {
      String was = old.get(t.file().location());
      if (was == null) {
        added.add(t);
      } else if (!was.equals(fileSet.get(t.file().location()))) {
        if (t.deletes().size() != 1 || t.deletes().get(0).format() != org.apache.iceberg.FileFormat.PUFFIN) {
          return false;
        }
        changed.add(t);
      }
    }
    int ordinals = 0;
    for (String location : old.keySet()) {
      ordinals = Math.max(ordinals, stale.ordinal(location) + 1);
    }
    boolean[] gone = new boolean[ordinals];
    for (String location : old.keySet()) {
      if (!fileSet.containsKey(location)) {
        gone[stale.ordinal(location)] = true;
      }
    }
    java.util.function.LongPredicate[] deleted = new java.util.function.LongPredicate[ordinals];
    org.apache.iceberg.data.BaseDeleteLoader loader = deleteLoader();
    for (FileScanTask t : changed) {
      PositionDeleteIndex positions = loader.loadPositionDeletes(t.deletes(), t.file().location());
      deleted[stale.ordinal(t.file().location())] = positions::isDeleted;
    }
    long removedAt = System.nanoTime();
    long removed = stale.removeStale(gone, deleted);
    long addedAt = System.nanoTime();
    int handed = addRows(stale, added);
    stale.synced(fileSet);
    LOG.debug("{}: key index synced in {} ms: {} files gone, {} deletion vectors changed, {} keys removed in {} ms, "
        + "{} files added ({} from a compaction's rows) in {} ms", table.name(), (System.nanoTime() - started) / 1_000_000,
        old.size() - (all.size() - added.size()), changed.size(), removed, (addedAt - removedAt) / 1_000_000,
        added.size(), handed, (System.nanoTime() - addedAt) / 1_000_000);
    return true;
  }

  /**
   * Whether bringing {@code stale} to {@code fileSet} is a long sync that may run in the
   * background: files were rewritten (some of the index's are gone, which a pass never does:
   * a compaction or a slice change) and it reads at least {@link KeyIndexes#backgroundSyncRows}
   * rows of files new to the index (its pending change applied first, when its commit landed).
   */
  private boolean syncsLong(KeyIndex stale, List<FileScanTask> all, Map<String, String> fileSet) {
    if (!indexes.backgroundSyncs()) {
      return false;
    }
    stale.settle(fileSet);
    if (fileSet.keySet().containsAll(stale.files().keySet())) {
      return false;
    }
    long added = 0;
    for (FileScanTask t : all) {
      if (!stale.files().containsKey(t.file().location())) {
        added += t.file().recordCount();
      }
    }
    return added >= indexes.backgroundSyncRows();
  }

  /**
   * Adds the live rows of the files of {@code tasks} to {@code target}: from the rows a compaction
   * of this process handed over for a file ({@link KeyIndexes#rewrittenRows}), else read from it.
   * Returns how many files' rows were handed over.
   */
  private int addRows(KeyIndex target, List<FileScanTask> tasks) {
    List<FileScanTask> unread = new ArrayList<>();
    for (FileScanTask task : tasks) {
      KeyIndex.WrittenFile rows = indexes.rewrittenRows(task.file().location());
      if (rows != null && rows.keys().length == task.file().recordCount()) {
        addWritten(target, task, rows);
      } else {
        unread.add(task);
      }
    }
    int handed = tasks.size() - unread.size();
    if (unread.isEmpty()) {
      return handed;
    }
    CurrentRows files = new CurrentRows(duck, table, unread);
    for (Map.Entry<String, FileScanTask> e : files.byLocalPath().entrySet()) {
      FileScanTask task = e.getValue();
      Schema fileSchema = duck.fileSchema(task.file().location(), e.getKey());
      int ordinal = target.ordinal(task.file().location());
      PositionDeleteIndex deleted = task.deletes().isEmpty() ? null : files.deletes(task);
      readRows("SELECT " + asLong(key, CurrentRows.column(fileSchema, key)) + ", "
          + (version == null ? "CAST(NULL AS BIGINT)" : asLong(version, CurrentRows.column(fileSchema, version)))
          + ", CAST(" + CurrentRows.column(fileSchema, MetadataColumns.ROW_ID) + " AS BIGINT), file_row_number"
          + " FROM read_parquet(" + SqlQuoting.literal(e.getKey()) + ", file_row_number = true) r",
          (k, v, rid, pos) -> {
            if ((deleted == null || !deleted.isDeleted(pos)) && !target.add(k, ordinal, pos, v, rid)) {
              throw new KeyIndex.Unusable("key " + k + " has more than one live row");
            }
          });
    }
    return handed;
  }

  /** Adds the rows of {@code task}'s file, known without reading it, that its deletes leave live. */
  private void addWritten(KeyIndex target, FileScanTask task, KeyIndex.WrittenFile rows) {
    PositionDeleteIndex deleted = task.deletes().isEmpty() ? null
        : deleteLoader().loadPositionDeletes(task.deletes(), task.file().location());
    int ordinal = target.ordinal(task.file().location());
    long[] keys = rows.keys();
    long[] positions = rows.positions();
    for (int i = 0; i < keys.length; i++) {
      if ((deleted == null || !deleted.isDeleted(positions[i]))
          && !target.add(keys[i], ordinal, positions[i], rows.versions()[i], rows.rowIds()[i])) {
        throw new KeyIndex.Unusable("key " + keys[i] + " has more than one live row");
      }
    }
  }

  private org.apache.iceberg.data.BaseDeleteLoader deleteLoader() {
    return new org.apache.iceberg.data.BaseDeleteLoader(f -> table.io().newInputFile(f.location(), f.fileSizeInBytes()));
  }

  /**
   * Looks the keys of {@code keysTable} (null: none) up and fills the current rows table;
   * returns the files they are in.
   */
  private CurrentRows lookup(List<FileScanTask> all, String keysTable) {
    return lookup(List.of(index), all, keysTable);
  }

  /**
   * As {@link #lookup(List, String)}, in several indexes (a sliced table's, one a slice: each
   * key has its row in one of them at most).
   */
  private CurrentRows lookup(List<KeyIndex> from, List<FileScanTask> all, String keysTable) {
    long[] keys = keysTable == null ? new long[0]
        : column(duck, "SELECT " + asLong(key, SqlQuoting.identifier(key.name())) + " FROM " + keysTable);
    List<KeyIndex.Hits> found = new ArrayList<>();
    int count = 0;
    for (KeyIndex ix : from) {
      KeyIndex.Hits h = ix.lookup(keys, keys.length);
      found.add(h);
      count += h.count;
    }

    Map<String, FileScanTask> byLocation = new HashMap<>();
    for (FileScanTask t : all) {
      byLocation.put(t.file().location(), t);
    }
    // The hits of all indexes in one set of arrays, their files numbered across the indexes.
    long[] hitKeys = new long[count];
    long[] ordinals = new long[count];
    long[] positions = new long[count];
    long[] versions = new long[count];
    long[] rowIds = new long[count];
    Map<String, Integer> numbers = new HashMap<>();
    Map<Integer, FileScanTask> matched = new LinkedHashMap<>();
    int n = 0;
    for (int x = 0; x < from.size(); x++) {
      KeyIndex ix = from.get(x);
      KeyIndex.Hits hits = found.get(x);
      Map<Integer, Integer> numberOf = new HashMap<>();
      for (int i = 0; i < hits.count; i++) {
        int number = numberOf.computeIfAbsent(hits.ordinals[i], o -> {
          String location = ix.location(o);
          FileScanTask task = byLocation.get(location);
          if (task == null) {
            throw new UnplannedFile("the key index names a file that is not planned: " + location);
          }
          return numbers.computeIfAbsent(location, l -> {
            matched.put(numbers.size(), task);
            return numbers.size();
          });
        });
        hitKeys[n] = hits.keys[i];
        ordinals[n] = number;
        positions[n] = hits.positions[i];
        versions[n] = hits.versions[i];
        rowIds[n] = hits.rowIds[i];
        n++;
      }
    }
    CurrentRows files = new CurrentRows(duck, table, new ArrayList<>(matched.values()));
    Map<String, String> localOf = new HashMap<>();
    files.byLocalPath().forEach((local, task) -> localOf.put(task.file().location(), local));
    duck.execute("CREATE OR REPLACE TEMP TABLE " + HIT_FILES + " (o BIGINT, filename VARCHAR, first_row_id BIGINT)");
    try (DuckDBAppender appender = duck.connection().createAppender("temp", "main", HIT_FILES)) {
      for (Map.Entry<Integer, FileScanTask> e : matched.entrySet()) {
        DataFile file = e.getValue().file();
        appender.beginRow().append((long) e.getKey()).append(localOf.get(file.location())).append(file.firstRowId())
            .endRow();
      }
    } catch (SQLException e) {
      throw io.storageengine.common.SeException.internal("DuckDB append failed: " + e.getMessage(), e);
    }

    BatchCurrentRows.create(duck, columns);
    List<String> select = new ArrayList<>();
    for (Types.NestedField c : columns.schema().columns()) {
      if (c.fieldId() == key.fieldId()) {
        select.add(fromLong(c, "h.k"));
      } else if (version != null && c.fieldId() == version.fieldId()) {
        select.add(fromLong(c, "h.v"));
      } else {
        select.add("CAST(NULL AS " + DuckSql.type(c.type()) + ")");
      }
    }
    duck.withLongColumns(HITS, new String[] {"k", "o", "p", "v", "r"},
        new long[][] {hitKeys, ordinals, positions, versions, rowIds}, KeyIndex.NONE, count,
        () -> duck.execute("INSERT INTO " + BatchCurrentRows.TABLE + " SELECT " + String.join(", ", select)
            + ", f.filename, h.p, coalesce(h.r, f.first_row_id + h.p) FROM " + HITS + " h JOIN " + HIT_FILES
            + " f ON h.o = f.o"));
    BatchCurrentRows.complete(duck, columns, files);
    return files;
  }

  /**
   * Reads back a data file this pass wrote, before it is published: for {@link
   * DataFileWriter#beforePublish}.
   */
  void written(String location, Path local) {
    if (index == null) {
      return;
    }
    try {
      written.add(readWritten(duck, key, version, location, local));
    } catch (KeyIndex.Unusable e) {
      LOG.debug("{}: key index dropped: {}", table.name(), e.getMessage());
      index = null;
    }
  }

  /**
   * The rows of a data file written with key column {@code key} and version column
   * {@code version} (null: none), read from its local copy {@code local}: per row its key,
   * position, version and explicit row id, as an index holds them.
   *
   * @throws KeyIndex.Unusable when a value is the index's NULL marker
   */
  static KeyIndex.WrittenFile readWritten(DuckSession duck, Types.NestedField key, Types.NestedField version,
      String location, Path local) {
    List<long[][]> parts = new ArrayList<>();
    int[] total = {0};
    duck.queryArrow("SELECT " + asLong(key, SqlQuoting.identifier(key.name())) + ", "
        + (version == null ? "CAST(NULL AS BIGINT)" : asLong(version, SqlQuoting.identifier(version.name())))
        + ", CAST(" + SqlQuoting.identifier(MetadataColumns.ROW_ID.name()) + " AS BIGINT), file_row_number FROM "
        + "read_parquet(" + SqlQuoting.literal(local.toString()) + ", file_row_number = true)", 65_536, root -> {
          int n = root.getRowCount();
          parts.add(new long[][] {longs((BigIntVector) root.getVector(0), n, false),
              longs((BigIntVector) root.getVector(3), n, false), longs((BigIntVector) root.getVector(1), n, true),
              longs((BigIntVector) root.getVector(2), n, true)});
          total[0] += n;
        });
    long[][] cols = new long[4][total[0]];
    int at = 0;
    for (long[][] part : parts) {
      for (int c = 0; c < cols.length; c++) {
        System.arraycopy(part[c], 0, cols[c], at, part[c].length);
      }
      at += part[0].length;
    }
    return new KeyIndex.WrittenFile(location, cols[0], cols[1], cols[2], cols[3]);
  }

  /**
   * Leaves the pass's changes pending in the index: the rows of {@link EntityFold#TABLE} that
   * replaced or deleted a current row lose it, the rows written ({@link #written}) are added, and
   * the file set becomes the index's with {@code dataFiles} added and each vector of {@code dvs}
   * replacing its data file's deletes.
   */
  void pend(List<DataFile> dataFiles, DeleteWriteResult dvs) {
    if (index == null) {
      return;
    }
    KeyIndex again = take();
    if (again != index) {
      index = again; // dropped meanwhile (memory for another table's index): no change to record
      return;
    }
    Map<String, String> after = new HashMap<>(index.files());
    for (DeleteFile dv : dvs.deleteFiles()) {
      after.put(dv.referencedDataFile(), KeyIndex.identity(dv));
    }
    for (DataFile f : dataFiles) {
      after.put(f.location(), "");
    }
    long[] removed = column(duck, "SELECT " + asLong(key, SqlQuoting.identifier(key.name())) + " FROM "
        + EntityFold.TABLE + " WHERE __max_ord > 0 AND __file IS NOT NULL");
    index.pend(after, removed, removed.length, written);
  }

  /** Takes the table's index from {@link KeyIndexes} (null: none kept), waiting while a reader holds it. */
  private KeyIndex take() {
    try {
      KeyIndex found = indexes.take(cacheKey);
      taken = true;
      return found;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw io.storageengine.common.SeException.unavailable("interrupted waiting for a key index", e);
    }
  }

  /** Hands the index back to {@link KeyIndexes} for the table's next pass. */
  void release() {
    if (!taken) {
      return; // never taken, or given back after the lookup and not taken again
    }
    if (index != null) {
      indexes.give(cacheKey, index);
    } else {
      indexes.giveUp(cacheKey);
    }
    index = null;
    taken = false;
  }

  private interface RowSink {
    void accept(long key, long version, long rowId, long position);
  }

  /** Runs {@code sql} (four BIGINT columns: key, version, row id, position) row by row. */
  private void readRows(String sql, RowSink sink) {
    duck.queryArrow(sql, 65_536, root -> rows(root, sink));
  }

  private static void rows(VectorSchemaRoot root, RowSink sink) {
    int n = root.getRowCount();
    long[] k = longs((BigIntVector) root.getVector(0), n, false);
    long[] v = longs((BigIntVector) root.getVector(1), n, true);
    long[] r = longs((BigIntVector) root.getVector(2), n, true);
    long[] p = longs((BigIntVector) root.getVector(3), n, false);
    for (int i = 0; i < n; i++) {
      sink.accept(k[i], v[i], r[i], p[i]);
    }
  }

  /**
   * The first {@code n} values of a BIGINT vector, copied in bulk (a value at a time checks
   * bounds and validity on every read: three times the cost of building an index); NULL is
   * {@link KeyIndex#NONE}, which is then no value's own.
   */
  private static long[] longs(BigIntVector vector, int n, boolean nullable) {
    long[] values = new long[n];
    if (n == 0) {
      return values;
    }
    vector.getDataBuffer().nioBuffer(0, n * Long.BYTES).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(values);
    boolean nulls = vector.getNullCount() > 0;
    if (nulls && !nullable) {
      throw new IllegalStateException("a key index read a NULL key or position");
    }
    for (int i = 0; i < n; i++) {
      if (values[i] == KeyIndex.NONE || nulls) {
        if (vector.isNull(i)) {
          values[i] = KeyIndex.NONE;
        } else if (values[i] == KeyIndex.NONE) {
          throw new KeyIndex.Unusable("a value equals the index's NULL marker");
        }
      }
    }
    return values;
  }

  /** Every value of the one BIGINT column of {@code sql}'s result. */
  /** The values of the one BIGINT column {@code sql} selects (no NULL), read through Arrow. */
  static long[] column(DuckSession duck, String sql) {
    List<long[]> parts = new ArrayList<>();
    int[] total = {0};
    duck.queryArrow(sql, 65_536, root -> {
      parts.add(longs((BigIntVector) root.getVector(0), root.getRowCount(), false));
      total[0] += root.getRowCount();
    });
    long[] all = new long[total[0]];
    int at = 0;
    for (long[] part : parts) {
      System.arraycopy(part, 0, all, at, part.length);
      at += part.length;
    }
    return all;
  }

  /** {@code expr} (a value of column {@code c}) as the BIGINT an index holds. */
  private static String asLong(Types.NestedField c, String expr) {
    return switch (c.type().typeId()) {
      case DATE -> "CAST(" + expr + " - DATE '1970-01-01' AS BIGINT)";
      case TIMESTAMP -> "epoch_us(" + expr + ")";
      default -> "CAST(" + expr + " AS BIGINT)";
    };
  }

  /** The value of column {@code c} that the BIGINT {@code expr} holds ({@link #asLong}'s inverse). */
  private static String fromLong(Types.NestedField c, String expr) {
    return switch (c.type().typeId()) {
      case DATE -> "CAST(DATE '1970-01-01' + CAST(" + expr + " AS INTEGER) AS DATE)";
      // Microseconds since the epoch either way; with a zone, an instant (the session's zone plays no part).
      case TIMESTAMP -> ((Types.TimestampType) c.type()).shouldAdjustToUTC()
          ? "(TIMESTAMPTZ '1970-01-01 00:00:00+00' + to_microseconds(" + expr + "))"
          : "make_timestamp(" + expr + ")";
      default -> "CAST(" + expr + " AS " + DuckSql.type(c.type()) + ")";
    };
  }
}
