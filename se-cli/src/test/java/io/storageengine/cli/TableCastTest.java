package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampNanoTZVector;
import org.apache.arrow.vector.TimeStampNanoVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** {@link TableCast}: text and bigints cast to the table's types; the rest passes through. */
class TableCastTest {
  private static final Schema TABLE = new Schema(
      Types.NestedField.required(1, "n", Types.IntegerType.get()),
      Types.NestedField.optional(2, "at", Types.TimestampNanoType.withZone()),
      Types.NestedField.optional(3, "local", Types.TimestampNanoType.withoutZone()),
      Types.NestedField.optional(4, "u", Types.UUIDType.get()),
      Types.NestedField.optional(5, "s", Types.StringType.get()));

  @Test
  void nanosecondTimestampsKeepEveryDigitAndOffsetsBecomeUtc() {
    try (BufferAllocator allocator = new RootAllocator();
        VectorSchemaRoot source = root(allocator, 1L, "2026-01-02T03:04:05.987654321+01:00", "1969-12-31 23:59:59.999999999",
            "123e4567-e89b-12d3-a456-426614174000", "kept");
        TableCast.Batch cast = new TableCast(TABLE, -1, allocator).apply(source)) {
      VectorSchemaRoot out = cast.root();
      assertThat(((IntVector) out.getVector("n")).get(0)).isEqualTo(1);
      TimeStampNanoTZVector at = (TimeStampNanoTZVector) out.getVector("at");
      assertThat(at.get(0)).isEqualTo(java.time.Instant.parse("2026-01-02T02:04:05.987654321Z").getEpochSecond()
          * 1_000_000_000L + 987_654_321L);
      assertThat(((TimeStampNanoVector) out.getVector("local")).get(0)).isEqualTo(-1L);
      assertThat(((FixedSizeBinaryVector) out.getVector("u")).get(0)).hasSize(16).startsWith((byte) 0x12, (byte) 0x3e);
      assertThat(out.getVector("s")).isSameAs(source.getVector("s"));
    }
  }

  @Test
  void aBigintThatDoesNotFitIntNamesRowAndColumnCountingEarlierBatches() {
    try (BufferAllocator allocator = new RootAllocator()) {
      TableCast cast = new TableCast(TABLE, -1, allocator);
      try (VectorSchemaRoot first = root(allocator, 5L, null, null, null, null);
          TableCast.Batch ok = cast.apply(first);
          VectorSchemaRoot second = root(allocator, 1L << 31, null, null, null, null)) {
        assertThat(ok.root().getRowCount()).isEqualTo(1);
        assertThatThrownBy(() -> cast.apply(second))
            .hasMessage("row 2, column `n`: 2147483648 does not fit int (32-bit; the column would need bigint)");
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  private static VectorSchemaRoot root(BufferAllocator allocator, long n, String at, String local, String u, String s) {
    BigIntVector nv = new BigIntVector("n", allocator);
    nv.allocateNew(1);
    nv.set(0, n);
    nv.setValueCount(1);
    List<FieldVector> vectors = new java.util.ArrayList<>(List.of(nv));
    String[][] texts = {{"at", at}, {"local", local}, {"u", u}, {"s", s}};
    for (String[] t : texts) {
      VarCharVector v = new VarCharVector(t[0], allocator);
      v.allocateNew(1);
      if (t[1] == null) {
        v.setNull(0);
      } else {
        v.setSafe(0, t[1].getBytes(StandardCharsets.UTF_8));
      }
      v.setValueCount(1);
      vectors.add(v);
    }
    VectorSchemaRoot root = new VectorSchemaRoot(vectors);
    root.setRowCount(1);
    return root;
  }
}
