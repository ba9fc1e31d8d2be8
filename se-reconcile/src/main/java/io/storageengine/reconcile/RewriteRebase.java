package io.storageengine.reconcile;

import io.storageengine.common.SeException;
import io.storageengine.duckdb.SqlQuoting;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
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
 * {@link #carry} finds the positions each input's current vector deletes that its planned one did
 * not, their rows in the staged table by file and position, those rows' row ids in the new
 * files, and writes deletion vectors of the new files for them, which the rewrite commits with
 * itself (replacing the inputs' current vectors). Needs row lineage (v3): without row ids a row
 * cannot be followed into the new files and the rewrite conflicts as before.
 */
public final class RewriteRebase {
  private static final String POSITIONS = "rebase_positions";
  private static final String ROW_IDS = "rebase_row_ids";

  /**
   * What {@link #carry} found.
   *
   * @param vectors the deletion vectors of new files to add with the rewrite (empty: none)
   * @param rows the rows they delete
   * @param conflict why the rewrite cannot be carried onto the current snapshot (null: it can):
   *     an input file is gone, or got deletes other than one deletion vector
   */
  public record Carried(List<DeleteFile> vectors, long rows, String conflict) {
    static Carried conflict(String why) {
      return new Carried(List.of(), 0, why);
    }
  }

  private RewriteRebase() {}

  /**
   * Carries the deletes that landed on {@code planned}'s files since they were staged onto
   * {@code written}.
   *
   * @param staged the staged table: one row per live row of {@code planned} at planning, with
   *     {@code __file} (the local path of {@code files}), {@code __pos} and {@code _row_id}
   * @param files the input files as staged (their local paths and planned deletes)
   * @param current every data file of the snapshot the rewrite will commit onto (its planning)
   * @param written the files the rewrite wrote, each with the local file it was published from
   */
  public static Carried carry(DuckSession duck, Table table, String staged, CurrentRows files,
      Iterable<FileScanTask> current, Map<DataFile, Path> written) {
    Map<String, FileScanTask> now = new HashMap<>();
    for (FileScanTask task : current) {
      now.put(task.file().location(), task);
    }
    BaseDeleteLoader loader = new BaseDeleteLoader(f -> table.io().newInputFile(f.location(), f.fileSizeInBytes()));
    Map<String, long[]> newlyDeleted = new HashMap<>(); // local path -> positions
    for (Map.Entry<String, FileScanTask> e : files.byLocalPath().entrySet()) {
      FileScanTask planned = e.getValue();
      FileScanTask task = now.get(planned.file().location());
      if (task == null) {
        return Carried.conflict("input file " + planned.file().location() + " is no longer in the table");
      }
      if (KeyIndex.deletes(planned).equals(KeyIndex.deletes(task))) {
        continue;
      }
      if (task.deletes().size() != 1 || task.deletes().get(0).format() != FileFormat.PUFFIN) {
        return Carried.conflict("input file " + planned.file().location() + " got deletes other than one deletion vector");
      }
      PositionDeleteIndex was = planned.deletes().isEmpty() ? PositionDeleteIndex.empty() : files.deletes(planned);
      PositionDeleteIndex is = loader.loadPositionDeletes(task.deletes(), task.file().location());
      long[] positions = new long[(int) Math.min(Integer.MAX_VALUE - 8, Math.max(0, is.cardinality()))];
      int[] n = {0};
      is.forEach(pos -> {
        if (!was.isDeleted(pos)) {
          positions[n[0]++] = pos;
        }
      });
      if (n[0] > 0) {
        newlyDeleted.put(e.getKey(), java.util.Arrays.copyOf(positions, n[0]));
      }
    }
    if (newlyDeleted.isEmpty()) {
      return new Carried(List.of(), 0, null);
    }
    duck.execute("CREATE OR REPLACE TEMP TABLE " + ROW_IDS + " (_row_id BIGINT)");
    for (Map.Entry<String, long[]> e : newlyDeleted.entrySet()) {
      duck.withLongs(POSITIONS, "__pos", e.getValue(), e.getValue().length, () -> duck.execute(
          "INSERT INTO " + ROW_IDS + " SELECT s." + SqlQuoting.identifier(MetadataColumns.ROW_ID.name()) + " FROM "
              + staged + " s JOIN " + POSITIONS + " p ON s.__pos = p.__pos WHERE s.__file = "
              + SqlQuoting.literal(e.getKey())));
    }
    Map<String, DataFile> byPath = new HashMap<>();
    List<String> paths = new ArrayList<>();
    for (Map.Entry<DataFile, Path> e : written.entrySet()) {
      String path = e.getValue().toString();
      byPath.put(path, e.getKey());
      paths.add(SqlQuoting.literal(path));
    }
    Map<String, long[]> positions = duck.positionsByFile("SELECT r.filename AS f, r.file_row_number AS p FROM read_parquet(["
        + String.join(", ", paths) + "], filename = true, file_row_number = true) r SEMI JOIN " + ROW_IDS + " d ON r."
        + SqlQuoting.identifier(MetadataColumns.ROW_ID.name()) + " = d._row_id", "f", "p");
    long expected = duck.queryLong("SELECT count(*) FROM " + ROW_IDS);
    long found = positions.values().stream().mapToLong(p -> p.length).sum();
    if (found != expected) {
      throw SeException.internal("table " + table.name() + ": " + expected + " rows deleted from a rewrite's inputs "
          + "since it was planned, but " + found + " of their row ids in the files it wrote", null);
    }
    OutputFileFactory outputs = OutputFileFactory.builderFor(table, 0, System.nanoTime())
        .format(FileFormat.PUFFIN).operationId(UUID.randomUUID().toString()).build();
    BaseDVFileWriter writer = new BaseDVFileWriter(outputs, location -> null);
    try (writer) {
      for (Map.Entry<String, long[]> e : positions.entrySet()) {
        DataFile file = Objects.requireNonNull(byPath.get(e.getKey()), e.getKey());
        for (long pos : e.getValue()) {
          writer.delete(file.location(), pos, table.specs().get(file.specId()), file.partition());
        }
      }
    } catch (IOException e) {
      throw SeException.unavailable("cannot write deletion vectors for " + table.name() + ": " + e.getMessage(), e);
    }
    return new Carried(List.copyOf(writer.result().deleteFiles()), found, null);
  }
}
