package io.storageengine.reconcile;

import io.storageengine.common.SeException;
import io.storageengine.wal.ArrowBatchCheck;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One Arrow stream over a run of consecutive WAL frames that share an Arrow schema, so DuckDB
 * stages the whole run with a single statement instead of one per frame (a frame is often a
 * single 1,000-row client batch, and a statement per frame dominated the pass). Every batch
 * carries the frame's columns plus {@value #OP} and {@value #SEQ}, the frame's operation and
 * segment seq. Batches are handed out in frame order; buffers are shared, not copied.
 */
final class WalFrameRunReader extends ArrowReader {
  static final String OP = "__op";
  static final String SEQ = "__seq";

  /** One frame of the run: its Arrow IPC stream, operation code and segment seq. */
  record Frame(byte[] arrowIpc, byte op, long seq) {}

  private final Schema frameSchema;
  private final Schema schema;
  private final List<Frame> frames;
  private final TinyIntVector ops;
  private final BigIntVector seqs;
  private int next;
  private ArrowStreamReader current;
  private long bytesRead;
  private CorruptFrameException corrupt;

  /** @param frameSchema the Arrow schema every frame of {@code frames} has */
  WalFrameRunReader(BufferAllocator allocator, Schema frameSchema, List<Frame> frames) {
    super(allocator);
    this.frameSchema = frameSchema;
    List<Field> fields = new ArrayList<>(frameSchema.getFields());
    fields.add(new Field(OP, FieldType.notNullable(new ArrowType.Int(8, true)), null));
    fields.add(new Field(SEQ, FieldType.notNullable(new ArrowType.Int(64, true)), null));
    this.schema = new Schema(fields);
    this.frames = frames;
    this.ops = new TinyIntVector(OP, allocator);
    this.seqs = new BigIntVector(SEQ, allocator);
  }

  /** The Arrow schema of one frame (reads only the stream's schema message). */
  static Schema schemaOf(BufferAllocator allocator, byte[] arrowIpc, long seq) {
    try (ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(arrowIpc), allocator)) {
      return reader.getVectorSchemaRoot().getSchema();
    } catch (IOException e) {
      throw SeException.internal("WAL segment " + seq + ": unreadable Arrow frame", e);
    }
  }

  @Override
  protected Schema readSchema() {
    return schema;
  }

  @Override
  public boolean loadNextBatch() throws IOException {
    prepareLoadNextBatch();
    while (true) {
      if (current == null) {
        if (next >= frames.size()) {
          return false;
        }
        current = new ArrowStreamReader(new ByteArrayInputStream(frames.get(next).arrowIpc()), allocator);
        if (!current.getVectorSchemaRoot().getSchema().equals(frameSchema)) {
          throw SeException.internal("WAL segment " + frames.get(next).seq()
              + ": frame schema differs from the run it was grouped with", null);
        }
        bytesRead += frames.get(next).arrowIpc().length;
        next++;
      }
      if (current.loadNextBatch()) {
        Frame frame = frames.get(next - 1);
        load(current.getVectorSchemaRoot(), frame);
        return true;
      }
      current.close();
      current = null;
    }
  }

  /**
   * Loads the frame's batch plus the constant op and seq columns into this reader's root, once
   * the batch passed {@link ArrowBatchCheck}: DuckDB's Arrow scan reads by every offset it is
   * given, so a frame that is not well-formed must never reach it.
   */
  private void load(VectorSchemaRoot batch, Frame frame) {
    try {
      ArrowBatchCheck.check(batch, current);
    } catch (SeException e) {
      corrupt = new CorruptFrameException(frame.seq(), e.getMessage());
      throw corrupt;
    }
    int rows = batch.getRowCount();
    ops.allocateNew(rows);
    seqs.allocateNew(rows);
    for (int i = 0; i < rows; i++) {
      ops.set(i, frame.op());
      seqs.set(i, frame.seq());
    }
    ops.setValueCount(rows);
    seqs.setValueCount(rows);
    List<FieldVector> vectors = new ArrayList<>(batch.getFieldVectors());
    vectors.add(ops);
    vectors.add(seqs);
    // A view over the frame's vectors and ours: it owns nothing, so it is not closed.
    VectorSchemaRoot combined = new VectorSchemaRoot(schema.getFields(), vectors, rows);
    try (ArrowRecordBatch recordBatch = new VectorUnloader(combined).getRecordBatch()) {
      loadRecordBatch(recordBatch);
    }
  }

  /** A WAL frame that failed its check: the segment it is in cannot be staged. */
  static final class CorruptFrameException extends SeException {
    private final long seq;
    private final String problem;

    CorruptFrameException(long seq, String problem) {
      super(io.storageengine.common.ErrorCode.INTERNAL,
          "WAL segment " + seq + " holds a malformed Arrow frame, quarantined: " + problem);
      this.seq = seq;
      this.problem = problem;
    }

    long seq() {
      return seq;
    }

    String problem() {
      return problem;
    }
  }

  /**
   * The frame that failed its check, if one did. DuckDB reports a failure of the stream it
   * reads only as its own error text, so the stager asks here what went wrong.
   */
  CorruptFrameException corrupt() {
    return corrupt;
  }

  @Override
  public long bytesRead() {
    return bytesRead;
  }

  @Override
  protected void closeReadSource() throws IOException {
    try {
      if (current != null) {
        current.close();
        current = null;
      }
    } finally {
      ops.close();
      seqs.close();
    }
  }
}
