package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.SeException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link TableCast} cell by cell: each cast, its NULLs, and the error each bad cell gets. */
class TableCastTypesTest {
  private final BufferAllocator allocator = new RootAllocator();

  @AfterEach
  void noLeak() {
    assertThat(allocator.getAllocatedMemory()).isZero();
    allocator.close();
  }

  @Test
  void textBecomesUuidAndNullStaysNull() {
    Schema table = schema(Types.UUIDType.get());
    try (VectorSchemaRoot source = texts(" 123e4567-e89b-12d3-a456-426614174000 ", null);
        TableCast.Batch cast = new TableCast(table, -1, allocator).apply(source)) {
      FixedSizeBinaryVector out = (FixedSizeBinaryVector) cast.root().getVector("c");
      assertThat(out.get(0)).containsExactly(0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3,
          0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00);
      assertThat(out.isNull(1)).isTrue();
    }
  }

  @Test
  void aBadUuidNamesRowColumnAndForm() {
    // The short form UUID.fromString accepts is refused: only 8-4-4-4-12.
    assertBad(schema(Types.UUIDType.get()), texts("123e4567-e89b-12d3-a456-426614174000", "1-2-3-4-5"),
        "row 2, column `c`: '1-2-3-4-5' is not a uuid (expected 8-4-4-4-12 hex digits)");
  }

  @Test
  void fixedComesFromHexTextOrFromBinaryOfTheRightLength() {
    Schema table = schema(Types.FixedType.ofLength(2));
    try (VectorSchemaRoot text = texts("0aFF", null);
        TableCast.Batch cast = new TableCast(table, -1, allocator).apply(text)) {
      FixedSizeBinaryVector out = (FixedSizeBinaryVector) cast.root().getVector("c");
      assertThat(out.get(0)).containsExactly(0x0a, 0xff);
      assertThat(out.isNull(1)).isTrue();
    }
    try (VectorSchemaRoot binary = binaries(new byte[] {1, 2});
        TableCast.Batch cast = new TableCast(table, -1, allocator).apply(binary)) {
      assertThat(((FixedSizeBinaryVector) cast.root().getVector("c")).get(0)).containsExactly(1, 2);
    }
    assertBad(table, texts("0aF"), "row 1, column `c`: '0aF' is not fixed(2) as hex (expected 4 hex digits)");
    assertBad(table, texts("zzzz"), "row 1, column `c`: 'zzzz' is not fixed(2) as hex (expected 4 hex digits)");
    assertBad(table, binaries(new byte[] {1, 2, 3}), "row 1, column `c`: 3 bytes, expected fixed(2)");
  }

  @Test
  void timestampsAcceptIsoFormsWithOrWithoutOffset() {
    assertThat(TableCast.parseTimestamp("2026-01-02")).isEqualTo(Instant.parse("2026-01-02T00:00:00Z"));
    assertThat(TableCast.parseTimestamp("2026-01-02 03:04")).isEqualTo(Instant.parse("2026-01-02T03:04:00Z"));
    assertThat(TableCast.parseTimestamp("2026-01-02T03:04:05.5")).isEqualTo(Instant.parse("2026-01-02T03:04:05.500Z"));
    assertThat(TableCast.parseTimestamp("2026-01-02T03:04:05Z")).isEqualTo(Instant.parse("2026-01-02T03:04:05Z"));
    assertThat(TableCast.parseTimestamp("2026-01-02T03:04:05+01:30")).isEqualTo(Instant.parse("2026-01-02T01:34:05Z"));
    assertThat(TableCast.parseTimestamp("2026-01-02T03:04:05+0130")).isEqualTo(Instant.parse("2026-01-02T01:34:05Z"));
    assertThat(TableCast.parseTimestamp("2026-01-02T03:04:05-05")).isEqualTo(Instant.parse("2026-01-02T08:04:05Z"));
    assertThatThrownBy(() -> TableCast.parseTimestamp("yesterday")).isInstanceOf(DateTimeParseException.class)
        .hasMessageContaining("yesterday");
  }

  @Test
  void aBadOrOutOfRangeTimestampIsNamed() {
    Schema table = schema(Types.TimestampNanoType.withZone());
    assertBad(table, texts("2026-01-02T03:04:05Z", "02/01/2026"), "row 2, column `c`: '02/01/2026' is not a"
        + " timestamp (expected ISO-8601 such as 2026-01-02T03:04:05.123456789Z)");
    assertBad(table, texts("2300-01-01T00:00:00Z"),
        "row 1, column `c`: '2300-01-01T00:00:00Z' is out of the range of timestamp_ns (years 1677 to 2262)");
  }

  @Test
  void columnsThatNeedNoCastPassThroughAsTheyAre() {
    Schema table = new Schema(
        Types.NestedField.optional(1, "c", Types.StringType.get()),
        Types.NestedField.optional(2, "flag", Types.UUIDType.get()));
    try (VectorSchemaRoot source = texts("not a uuid");
        BitVector presence = new BitVector("flag", allocator)) {
      presence.allocateNew(1);
      presence.set(0, 1);
      presence.setValueCount(1);
      try (VectorSchemaRoot withPresence = new VectorSchemaRoot(List.of(source.getVector("c"), presence))) {
        withPresence.setRowCount(1);
        // Only the first column is file data: "flag" is a presence column, not the uuid column.
        try (TableCast.Batch cast = new TableCast(table, 1, allocator).apply(withPresence)) {
          assertThat(cast.root().getVector("c")).isSameAs(source.getVector("c"));
          assertThat(cast.root().getVector("flag")).isSameAs(presence);
        }
      }
    }
    assertThat(TableCast.needsCast(new org.apache.arrow.vector.types.pojo.Field("c",
        FieldType.nullable(new ArrowType.Int(32, true)), null), Types.IntegerType.get())).isFalse();
    assertThat(TableCast.needsCast(new org.apache.arrow.vector.types.pojo.Field("c",
        FieldType.nullable(new ArrowType.Int(64, true)), null), Types.LongType.get())).isFalse();
  }

  @Test
  void structChildrenAreCastByNameAndErrorsNameTheirPath() {
    Schema table = schema(Types.StructType.of(
        Types.NestedField.optional(10, "x", Types.UUIDType.get()),
        Types.NestedField.optional(11, "y", Types.StringType.get())));
    try (VectorSchemaRoot source = struct("123e4567-e89b-12d3-a456-426614174000", "keep");
        TableCast.Batch cast = new TableCast(table, -1, allocator).apply(source)) {
      StructVector out = (StructVector) cast.root().getVector("c");
      assertThat(((FixedSizeBinaryVector) out.getChild("x")).get(0)).hasSize(16).startsWith((byte) 0x12);
      assertThat(new String(((VarCharVector) out.getChild("y")).get(0), StandardCharsets.UTF_8)).isEqualTo("keep");
    }
    assertBad(table, struct("nope", "keep"), "row 1, column `c.x`: 'nope' is not a uuid (expected 8-4-4-4-12 hex digits)");
  }

  @Test
  void listElementsAreCastAndAnErrorNamesTheRowOfTheList() {
    Schema table = schema(Types.ListType.ofOptional(10, Types.IntegerType.get()));
    try (VectorSchemaRoot source = bigintLists(List.of(1L, 2L), List.of(3L));
        TableCast.Batch cast = new TableCast(table, -1, allocator).apply(source)) {
      ListVector out = (ListVector) cast.root().getVector("c");
      assertThat(out.getDataVector()).isInstanceOf(IntVector.class);
      assertThat(out.getObject(0)).asList().containsExactly(1, 2);
      assertThat(out.getObject(1)).asList().containsExactly(3);
    }
    assertBad(table, bigintLists(List.of(1L), List.of(2L, 1L << 40)),
        "row 2, column `c.element`: 1099511627776 does not fit int (32-bit; the column would need bigint)");
  }

  private void assertBad(Schema table, VectorSchemaRoot source, String message) {
    try (source) {
      assertThatThrownBy(() -> new TableCast(table, -1, allocator).apply(source))
          .isInstanceOf(SeException.class)
          .hasMessage(message);
    }
  }

  private static Schema schema(org.apache.iceberg.types.Type type) {
    return new Schema(Types.NestedField.optional(1, "c", type));
  }

  private VectorSchemaRoot texts(String... values) {
    return one(values.length, name -> {
      VarCharVector v = new VarCharVector(name, allocator);
      v.allocateNew(values.length);
      for (int i = 0; i < values.length; i++) {
        if (values[i] == null) {
          v.setNull(i);
        } else {
          v.setSafe(i, values[i].getBytes(StandardCharsets.UTF_8));
        }
      }
      return v;
    });
  }

  private VectorSchemaRoot binaries(byte[] value) {
    return one(1, name -> {
      VarBinaryVector v = new VarBinaryVector(name, allocator);
      v.allocateNew(1);
      v.setSafe(0, value);
      return v;
    });
  }

  private VectorSchemaRoot struct(String x, String y) {
    return one(1, name -> {
      StructVector s = StructVector.empty(name, allocator);
      VarCharVector xv = s.addOrGet("x", FieldType.nullable(new ArrowType.Utf8()), VarCharVector.class);
      VarCharVector yv = s.addOrGet("y", FieldType.nullable(new ArrowType.Utf8()), VarCharVector.class);
      s.allocateNew();
      xv.setSafe(0, x.getBytes(StandardCharsets.UTF_8));
      yv.setSafe(0, y.getBytes(StandardCharsets.UTF_8));
      xv.setValueCount(1);
      yv.setValueCount(1);
      s.setIndexDefined(0);
      return s;
    });
  }

  @SafeVarargs
  private VectorSchemaRoot bigintLists(List<Long>... rows) {
    return one(rows.length, name -> {
      ListVector l = ListVector.empty(name, allocator);
      UnionListWriter writer = l.getWriter();
      for (int r = 0; r < rows.length; r++) {
        writer.setPosition(r);
        writer.startList();
        for (long value : rows[r]) {
          writer.bigInt().writeBigInt(value);
        }
        writer.endList();
      }
      return l;
    });
  }

  private static VectorSchemaRoot one(int rows, Function<String, FieldVector> column) {
    FieldVector v = column.apply("c");
    v.setValueCount(rows);
    VectorSchemaRoot root = new VectorSchemaRoot(List.of(v));
    root.setRowCount(rows);
    return root;
  }
}
