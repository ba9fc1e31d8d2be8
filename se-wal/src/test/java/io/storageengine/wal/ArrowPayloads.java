package io.storageengine.wal;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/** Real Arrow IPC stream payloads for WAL frames: {@code id bigint, name utf8} with field ids. */
final class ArrowPayloads {
  static final Schema SCHEMA = new Schema(List.of(
      new Field("id", new FieldType(false, new ArrowType.Int(64, true), null,
          Map.of(WalFrame.FIELD_ID_METADATA_KEY, "1")), null),
      new Field("name", new FieldType(true, ArrowType.Utf8.INSTANCE, null,
          Map.of(WalFrame.FIELD_ID_METADATA_KEY, "2")), null)));

  private ArrowPayloads() {}

  /** One batch with rows {@code (firstId + i, "row-<firstId + i>")}, as an IPC stream. */
  static byte[] rows(BufferAllocator allocator, long firstId, int count) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
      BigIntVector ids = (BigIntVector) root.getVector("id");
      VarCharVector names = (VarCharVector) root.getVector("name");
      ids.allocateNew(count);
      names.allocateNew(count);
      for (int i = 0; i < count; i++) {
        ids.set(i, firstId + i);
        names.setSafe(i, ("row-" + (firstId + i)).getBytes(java.nio.charset.StandardCharsets.UTF_8));
      }
      root.setRowCount(count);
      try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, Channels.newChannel(out))) {
        writer.start();
        writer.writeBatch();
        writer.end();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  /** Reads an IPC stream back: its schema and the ids of every row, in order. */
  static Decoded read(BufferAllocator allocator, byte[] ipc) {
    List<Long> ids = new ArrayList<>();
    try (ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(ipc), allocator)) {
      Schema schema = reader.getVectorSchemaRoot().getSchema();
      while (reader.loadNextBatch()) {
        BigIntVector vector = (BigIntVector) reader.getVectorSchemaRoot().getVector("id");
        for (int i = 0; i < vector.getValueCount(); i++) {
          ids.add(vector.get(i));
        }
      }
      return new Decoded(schema, ids);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  record Decoded(Schema schema, List<Long> ids) {}
}
