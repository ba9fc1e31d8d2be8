package io.storageengine.reconcile;

import io.storageengine.common.SeException;
import io.storageengine.duckdb.SqlQuoting;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.io.OutputFileFactory;

/**
 * Rows deleted from a rewrite's input files after the rewrite read them, carried onto the files
 * it wrote, so that the rewrite commits instead of conflicting.
 *
 * <p>A compaction reads the live rows of its input files (their deletion vectors as planned) into
 * a staged DuckDB table, each row with the local file it was read from ({@code __file}), its
 * position there ({@code __pos}) and its v3 {@code _row_id}, and writes them into new files that
 * keep every row's {@code _row_id}. A reconcile pass that commits meanwhile deletes rows of the
 * input files with new deletion vectors (an entity update or delete; on a table updated all over
 * its key space, every file gets some within seconds), and those rows are in the new files too.
 * A {@link Carry} follows them: {@link Carry#advance} finds the positions each input's current
 * vector deletes that the vector it covered before did not (at first: the planned one), their
 * rows in the staged table by file and position (one statement for all inputs), and those rows'
 * positions in the new files (one scan of the new files' row ids); {@link Carry#vectors} writes
 * deletion vectors of the new files for every row carried so far, which the rewrite commits with
 * itself (replacing the inputs' current vectors). A carry advances as often as needed: the
 * compactor brings it to the table's current snapshot while passes go on, and then, holding the
 * table's passes back, only across the commits that landed since. Needs row lineage (v3):
 * without row ids a row cannot be followed into the new files and the rewrite conflicts as
 * before.
 */
public final class RewriteRebase {
  private static final String POSITIONS = "rebase_positions";
  private static final String FILES = "rebase_files";
  private static final String ROW_IDS = "rebase_row_ids";

  private RewriteRebase() {}

  /**
   * The rows a rewrite carried so far: per input, the deletes covered (its planned vector at
   * first), and per file the rewrite wrote, the positions its deletion vector must delete. Not
   * thread-safe: one rewrite's.
   */
  public static final class Carry {
    private final DuckSession duck;
    private final Table table;
    private final String staged;
    private final CurrentRows files;
    private final Map<DataFile, Path> written;
    private final BaseDeleteLoader loader;
    /** By input location: the task whose deletes are covered, and those deletes. */
    private final Map<String, FileScanTask> coveredTasks = new HashMap<>();
    private final Map<String, PositionDeleteIndex> coveredDeletes = new HashMap<>();
    /** By written local path: the positions carried there, in batches. */
    private final Map<String, List<long[]>> positions = new LinkedHashMap<>();
    private long rows;

    /**
     * A carry of nothing yet.
     *
     * @param staged the staged table: one row per live row of the inputs at planning, with
     *     {@code __file} (the local path of {@code files}), {@code __pos} and {@code _row_id}
     * @param files the input files as staged (their local paths and planned deletes)
     * @param written the files the rewrite wrote, each with the local file it was published from
     */
    public Carry(DuckSession duck, Table table, String staged, CurrentRows files, Map<DataFile, Path> written) {
      this.duck = duck;
      this.table = table;
      this.staged = staged;
      this.files = files;
      this.written = written;
      this.loader = new BaseDeleteLoader(f -> table.io().newInputFile(f.location(), f.fileSizeInBytes()));
      files.byLocalPath().values().forEach(task -> coveredTasks.put(task.file().location(), task));
    }

    /** The rows carried so far. */
    public long rows() {
      return rows;
    }

    /**
     * Carries the rows deleted from the inputs since the deletes covered so far, onto
     * {@code current} (every data file of the snapshot the rewrite will commit onto): null when
     * done, else why the rewrite cannot be carried there (an input file is gone, got deletes
     * other than one deletion vector, or no longer deletes a row it deleted before). On a
     * conflict nothing is carried.
     */
    public String advance(Iterable<FileScanTask> current) {
      Map<String, FileScanTask> now = new HashMap<>();
      for (FileScanTask task : current) {
        now.put(task.file().location(), task);
      }
      List<String> inputs = new ArrayList<>();
      List<long[]> newly = new ArrayList<>();
      Map<String, FileScanTask> nextTasks = new HashMap<>();
      Map<String, PositionDeleteIndex> nextDeletes = new HashMap<>();
      int count = 0;
      for (Map.Entry<String, FileScanTask> e : files.byLocalPath().entrySet()) {
        String location = e.getValue().file().location();
        FileScanTask covered = coveredTasks.get(location);
        FileScanTask task = now.get(location);
        if (task == null) {
          return "input file " + location + " is no longer in the table";
        }
        if (KeyIndex.deletes(covered).equals(KeyIndex.deletes(task))) {
          continue;
        }
        if (task.deletes().size() != 1 || task.deletes().get(0).format() != FileFormat.PUFFIN) {
          return "input file " + location + " got deletes other than one deletion vector";
        }
        PositionDeleteIndex was = coveredDeletes.get(location);
        if (was == null) {
          was = covered.deletes().isEmpty() ? PositionDeleteIndex.empty() : files.deletes(covered);
        }
        PositionDeleteIndex is = loader.loadPositionDeletes(task.deletes(), location);
        boolean[] kept = {true};
        was.forEach(pos -> kept[0] &= is.isDeleted(pos));
        if (!kept[0]) {
          return "input file " + location + " no longer deletes a row it deleted before";
        }
        long[] positionsOf = new long[(int) Math.min(Integer.MAX_VALUE - 8, Math.max(0, is.cardinality()))];
        int[] n = {0};
        PositionDeleteIndex before = was;
        is.forEach(pos -> {
          if (!before.isDeleted(pos)) {
            positionsOf[n[0]++] = pos;
          }
        });
        nextTasks.put(location, task);
        nextDeletes.put(location, is);
        if (n[0] > 0) {
          inputs.add(e.getKey());
          newly.add(java.util.Arrays.copyOf(positionsOf, n[0]));
          count += n[0];
        }
      }
      if (count > 0) {
        follow(inputs, newly, count);
      }
      coveredTasks.putAll(nextTasks);
      coveredDeletes.putAll(nextDeletes);
      return null;
    }

    /**
     * Finds the rows at {@code newly.get(i)} of the input staged from local path
     * {@code inputs.get(i)} in the written files, and adds their positions there.
     */
    private void follow(List<String> inputs, List<long[]> newly, int count) {
      long[] fileIds = new long[count];
      long[] inputPositions = new long[count];
      int at = 0;
      StringBuilder values = new StringBuilder();
      for (int i = 0; i < inputs.size(); i++) {
        values.append(i == 0 ? "" : ", ").append("(").append(SqlQuoting.literal(inputs.get(i))).append(", ")
            .append(i).append(")");
        for (long pos : newly.get(i)) {
          fileIds[at] = i;
          inputPositions[at++] = pos;
        }
      }
      duck.execute("CREATE OR REPLACE TEMP TABLE " + FILES + " AS SELECT * FROM (VALUES " + values
          + ") v(__file, __input)");
      duck.execute("CREATE OR REPLACE TEMP TABLE " + ROW_IDS + " (_row_id BIGINT)");
      duck.withLongColumns(POSITIONS, new String[] {"__input", "__pos"}, new long[][] {fileIds, inputPositions}, null,
          count, () -> duck.execute("INSERT INTO " + ROW_IDS + " SELECT s."
              + SqlQuoting.identifier(MetadataColumns.ROW_ID.name()) + " FROM " + staged + " s JOIN " + FILES
              + " f ON s.__file = f.__file JOIN " + POSITIONS + " p ON p.__input = f.__input AND p.__pos = s.__pos"));
      List<String> paths = new ArrayList<>();
      for (Path path : written.values()) {
        paths.add(SqlQuoting.literal(path.toString()));
      }
      Map<String, long[]> found = duck.positionsByFile("SELECT r.filename AS f, r.file_row_number AS p FROM "
          + "read_parquet([" + String.join(", ", paths) + "], filename = true, file_row_number = true) r SEMI JOIN "
          + ROW_IDS + " d ON r." + SqlQuoting.identifier(MetadataColumns.ROW_ID.name()) + " = d._row_id", "f", "p");
      long foundRows = found.values().stream().mapToLong(p -> p.length).sum();
      if (foundRows != count) {
        throw SeException.internal("table " + table.name() + ": " + count + " rows deleted from a rewrite's inputs "
            + "since it was planned, but " + foundRows + " of their row ids in the files it wrote", null);
      }
      found.forEach((path, at2) -> positions.computeIfAbsent(path, p -> new ArrayList<>()).add(at2));
      rows += foundRows;
    }

    /**
     * Writes the deletion vectors of the written files for every row carried so far (none: no
     * vector); the caller commits them with the rewrite, or deletes them if it does not land.
     */
    public List<DeleteFile> vectors() {
      if (positions.isEmpty()) {
        return List.of();
      }
      Map<String, DataFile> byPath = new HashMap<>();
      written.forEach((file, path) -> byPath.put(path.toString(), file));
      OutputFileFactory outputs = OutputFileFactory.builderFor(table, 0, System.nanoTime())
          .format(FileFormat.PUFFIN).operationId(UUID.randomUUID().toString()).build();
      BaseDVFileWriter writer = new BaseDVFileWriter(outputs, location -> null);
      try (writer) {
        for (Map.Entry<String, List<long[]>> e : positions.entrySet()) {
          DataFile file = Objects.requireNonNull(byPath.get(e.getKey()), e.getKey());
          for (long[] batch : e.getValue()) {
            for (long pos : batch) {
              writer.delete(file.location(), pos, table.specs().get(file.specId()), file.partition());
            }
          }
        }
      } catch (IOException e) {
        throw SeException.unavailable("cannot write deletion vectors for " + table.name() + ": " + e.getMessage(), e);
      }
      return List.copyOf(writer.result().deleteFiles());
    }
  }
}
