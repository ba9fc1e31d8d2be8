package io.storageengine.stress.bench;

import java.nio.charset.StandardCharsets;
import java.util.function.LongUnaryOperator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The rows of the entity benchmarks, {@code (id bigint, ts timestamp, v int, s string)} with
 * {@code id} the key and {@code ts} the version: for key {@code k} at version {@code version},
 * {@code ts = 1_700_000_000 s + version s + (k % 1000) us}, {@code v = k * 31 % 100000},
 * {@code s = "s" + k % 10000}. The Spark anchor ({@code se-spark}'s {@code MergeAnchor}) writes
 * the same values.
 */
final class EntityRows {
  private EntityRows() {}

  /**
   * Fills {@code root} (the entity schema's Arrow form, allocated by the caller, who keeps
   * owning it) with {@code n} rows, row {@code i} having key {@code key(from + i)}.
   */
  static void fill(VectorSchemaRoot root, long from, int n, LongUnaryOperator key, long version) {
    BigIntVector id = (BigIntVector) root.getVector("id");
    TimeStampMicroVector ts = (TimeStampMicroVector) root.getVector("ts");
    IntVector v = (IntVector) root.getVector("v");
    VarCharVector s = (VarCharVector) root.getVector("s");
    id.allocateNew(n);
    ts.allocateNew(n);
    v.allocateNew(n);
    s.allocateNew(n * 8L, n);
    for (int i = 0; i < n; i++) {
      long k = key.applyAsLong(from + i);
      id.set(i, k);
      ts.set(i, 1_700_000_000_000_000L + version * 1_000_000L + (k % 1000));
      v.set(i, (int) (k * 31 % 100_000));
      s.setSafe(i, ("s" + (k % 10_000)).getBytes(StandardCharsets.UTF_8));
    }
    root.setRowCount(n);
  }
}
