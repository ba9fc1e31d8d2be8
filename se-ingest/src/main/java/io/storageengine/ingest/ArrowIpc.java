package io.storageengine.ingest;

import io.storageengine.common.SeException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.Channels;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.pojo.Schema;

/** Writes validated columns as one Arrow IPC stream (schema + one record batch). */
final class ArrowIpc {
  private ArrowIpc() {}

  /**
   * Serialises {@code vectors} under {@code schema}. The schema may differ from the vectors' own
   * fields in names, nullability and metadata, never in layout: that is how field ids reach the
   * WAL without copying columns whose buffers are already right.
   */
  static byte[] write(Schema schema, List<FieldVector> vectors, int rowCount) {
    long estimate = 1024;
    for (FieldVector v : vectors) {
      estimate += v.getBufferSize() + 64;
    }
    // A view over vectors owned elsewhere: deliberately not closed, it owns nothing.
    VectorSchemaRoot view = new VectorSchemaRoot(schema, vectors, rowCount);
    ExposedOutputStream out = new ExposedOutputStream((int) Math.min(estimate, Integer.MAX_VALUE - 16));
    try (ArrowStreamWriter writer = new ArrowStreamWriter(view, null, Channels.newChannel(out))) {
      writer.start();
      writer.writeBatch();
      writer.end();
    } catch (IOException e) {
      throw SeException.internal("cannot encode Arrow IPC stream", e);
    }
    return out.bytes();
  }

  /** Avoids the final copy of {@code toByteArray()} when the estimate was exact. */
  private static final class ExposedOutputStream extends ByteArrayOutputStream {
    ExposedOutputStream(int size) {
      super(size);
    }

    byte[] bytes() {
      return count == buf.length ? buf : toByteArray();
    }
  }
}
