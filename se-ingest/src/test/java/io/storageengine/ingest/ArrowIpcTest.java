package io.storageengine.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

/** The one-copy IPC writer produces exactly what Arrow's own stream writer produces. */
class ArrowIpcTest {
  static final Schema SCHEMA = new Schema(List.of(
      new Field("id", new FieldType(false, new ArrowType.Int(64, true), null,
          Map.of("PARQUET:field_id", "1")), null),
      new Field("name", new FieldType(true, ArrowType.Utf8.INSTANCE, null,
          Map.of("PARQUET:field_id", "2")), null),
      new Field("tags", new FieldType(true, ArrowType.List.INSTANCE, null,
          Map.of("PARQUET:field_id", "3")),
          List.of(new Field("element", new FieldType(true, new ArrowType.Int(64, true), null,
              Map.of("PARQUET:field_id", "4")), null)))));

  @Test
  void writesTheBytesOfArrowStreamWriterAndReadsBack() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
      // 3 rows: odd lengths everywhere, so buffer padding and alignment are exercised.
      fill(root, 3);
      byte[] expected = referenceStream(root);

      byte[] actual = ArrowIpc.write(ArrowIpc.schemaMessage(SCHEMA), SCHEMA,
          root.getFieldVectors(), root.getRowCount());

      assertThat(actual).isEqualTo(expected);
      try (ArrowStreamReader reader =
          new ArrowStreamReader(new ByteArrayInputStream(actual), allocator)) {
        assertThat(reader.loadNextBatch()).isTrue();
        VectorSchemaRoot read = reader.getVectorSchemaRoot();
        assertThat(read.getSchema()).isEqualTo(SCHEMA);
        assertThat(read.contentToTSVString()).isEqualTo(root.contentToTSVString());
        assertThat(reader.loadNextBatch()).isFalse();
      }
    }
  }

  @Test
  void anEmptyBatchIsAValidStreamToo() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
      fill(root, 0);
      assertThat(ArrowIpc.write(ArrowIpc.schemaMessage(SCHEMA), SCHEMA, root.getFieldVectors(), 0))
          .isEqualTo(referenceStream(root));
    }
  }

  private static void fill(VectorSchemaRoot root, int rows) {
    BigIntVector id = (BigIntVector) root.getVector("id");
    VarCharVector name = (VarCharVector) root.getVector("name");
    ListVector tags = (ListVector) root.getVector("tags");
    UnionListWriter writer = tags.getWriter();
    for (int row = 0; row < rows; row++) {
      id.setSafe(row, row * 7L);
      if (row == 1) {
        name.setNull(row);
      } else {
        name.setSafe(row, ("name-" + row).getBytes(StandardCharsets.UTF_8));
      }
      writer.setPosition(row);
      writer.startList();
      for (int i = 0; i <= row; i++) {
        writer.bigInt().writeBigInt(row * 10L + i);
      }
      writer.endList();
    }
    root.setRowCount(rows);
  }

  private static byte[] referenceStream(VectorSchemaRoot root) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, Channels.newChannel(out))) {
      writer.start();
      writer.writeBatch();
      writer.end();
    }
    return out.toByteArray();
  }
}
