package io.storageengine.reconcile;

import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.duckdb.SqlQuoting;
import io.storageengine.wal.WalSegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;

/**
 * The rows reconciliation will add to an append table for WAL segments not reconciled yet, for
 * readers that show them before the commit (queries that read their own writes). The rows are
 * staged exactly as a reconcile pass stages them ({@link WalStaging}: columns matched by field id
 * to {@code schema}, safe widenings applied, the same checks of every frame) and written, as
 * {@link AppendMaterializer} writes them, as Parquet with the Iceberg field ids of
 * {@code schema}: so a reader sees the file as one more data file of the table.
 *
 * <p>Entity tables are not covered: their rows depend on the fold with the table's current rows.
 */
public final class WalTailRows {
  private WalTailRows() {}

  /**
   * Writes the append rows of {@code segments} to the Parquet file {@code target} (replaced) and
   * returns how many rows it holds.
   *
   * @param threads DuckDB worker threads (sessions with the same count share a database)
   * @param scope the tenant (catalog id) the segments belong to
   * @throws io.storageengine.common.SeException INVALID_ARGUMENT (or a {@code CorruptFrameException})
   *     for a segment that reconciliation would refuse as well
   */
  public static long writeAppendRows(DuckRuntime duckdb, BufferAllocator allocator, int threads, String scope,
      Schema schema, List<WalSegment> segments, Path target) {
    try (BufferAllocator child = allocator.newChildAllocator("wal-tail-" + scope, 0, Long.MAX_VALUE);
        DuckSession duck = new DuckSession(duckdb, child, threads, scope)) {
      long rows = WalStaging.load(duck, schema, segments);
      List<String> names = new ArrayList<>();
      for (Types.NestedField c : schema.columns()) {
        names.add(SqlQuoting.identifier(c.name()));
      }
      duck.execute("COPY (SELECT " + String.join(", ", names) + " FROM " + WalStaging.TABLE + ") TO "
          + SqlQuoting.literal(target.toString()) + " (FORMAT parquet, FIELD_IDS "
          + DuckSql.fieldIds(schema.columns()) + ")");
      return rows;
    }
  }
}
