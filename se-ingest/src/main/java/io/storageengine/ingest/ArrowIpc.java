package io.storageengine.ingest;

import io.storageengine.common.SeException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Writes validated columns as one Arrow IPC stream (schema + one record batch + end of stream),
 * byte for byte what {@code ArrowStreamWriter} writes, but cheaper: the schema message is
 * serialised once per stream ({@link #schemaMessage}), and the batch's buffers are copied once,
 * straight into an array of the exact size, instead of through an 8 KiB staging buffer into a
 * growing stream.
 */
final class ArrowIpc {
  private ArrowIpc() {}

  /** The IPC schema message of {@code schema}: the prefix of every stream {@link #write} makes. */
  static byte[] schemaMessage(Schema schema) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      MessageSerializer.serialize(new WriteChannel(Channels.newChannel(out)), schema);
    } catch (IOException e) {
      throw SeException.internal("cannot encode Arrow IPC schema", e);
    }
    return out.toByteArray();
  }

  /**
   * Serialises {@code vectors} under {@code schema}, whose message {@code schemaMessage} is. The
   * schema may differ from the vectors' own fields in names, nullability and metadata, never in
   * layout: that is how field ids reach the WAL without copying columns whose buffers are
   * already right.
   */
  static byte[] write(byte[] schemaMessage, Schema schema, List<FieldVector> vectors,
      int rowCount) {
    // A view over vectors owned elsewhere: deliberately not closed, it owns nothing.
    VectorSchemaRoot view = new VectorSchemaRoot(schema, vectors, rowCount);
    try (ArrowRecordBatch batch = new VectorUnloader(view).getRecordBatch()) {
      // First pass counts (no bytes move), so the second writes into an array of exact size.
      ArrayChannel counter = new ArrayChannel(null, 0);
      MessageSerializer.serialize(new WriteChannel(counter), batch);
      long size = (long) schemaMessage.length + counter.position + END_OF_STREAM_BYTES;
      if (size > Integer.MAX_VALUE - 16) {
        throw SeException.invalid("batch of %d bytes is too large for one WAL frame", size);
      }
      byte[] out = new byte[(int) size];
      System.arraycopy(schemaMessage, 0, out, 0, schemaMessage.length);
      ArrayChannel channel = new ArrayChannel(out, schemaMessage.length);
      MessageSerializer.serialize(new WriteChannel(channel), batch);
      // End of stream: the continuation token, then a zero message length.
      ByteBuffer.wrap(out, channel.position, END_OF_STREAM_BYTES).order(ByteOrder.LITTLE_ENDIAN)
          .putInt(MessageSerializer.IPC_CONTINUATION_TOKEN).putInt(0);
      return out;
    } catch (IOException e) {
      throw SeException.internal("cannot encode Arrow IPC stream", e);
    }
  }

  private static final int END_OF_STREAM_BYTES = 8;

  /** Copies what is written into an array from an offset on; with no array it only counts. */
  private static final class ArrayChannel implements WritableByteChannel {
    private final byte[] target;
    private int position;

    ArrayChannel(byte[] target, int position) {
      this.target = target;
      this.position = position;
    }

    @Override
    public int write(ByteBuffer src) {
      int length = src.remaining();
      if (target == null) {
        src.position(src.limit());
      } else {
        src.get(target, position, length);
      }
      position += length;
      return length;
    }

    @Override
    public boolean isOpen() {
      return true;
    }

    @Override
    public void close() {}
  }
}
