package io.storageengine.ingest;

import io.storageengine.common.SeException;
import io.storageengine.common.telemetry.IngestTrace;
import io.storageengine.common.telemetry.Metrics;
import io.storageengine.wal.ArrowBatchCheck;
import io.storageengine.wal.ProducerStamp;
import io.storageengine.wal.WalFrame;
import java.time.Duration;
import java.util.Arrays;
import java.util.function.Consumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;

/**
 * The two steps of taking one batch in, shared by every kind of stream: {@link #prepare}
 * validates and converts it (nothing of it is kept in Arrow memory afterwards), {@link #commit}
 * hands the result to the table's group commit once the caller accounted its bytes.
 */
final class BatchIntake {
  private BatchIntake() {}

  /**
   * A validated batch in the table's types, as the WAL frame's Arrow IPC bytes; {@code producer}
   * is the identity of an idempotent write (null: a plain one) with the retention of its table.
   */
  record Prepared(IngestTarget target, String table, long requestId, int rows, byte[] ipc,
      ProducerStamp producer, Duration producerRetention) {
    Prepared(IngestTarget target, String table, long requestId, int rows, byte[] ipc) {
      this(target, table, requestId, rows, ipc, null, null);
    }

    /** This batch as the idempotent write {@code stamp}. */
    Prepared withProducer(ProducerStamp stamp, Duration retention) {
      return new Prepared(target, table, requestId, rows, ipc, stamp, retention);
    }
  }

  /**
   * Checks the loaded batch's buffers (offsets, UTF-8, dictionary indices, nested lengths,
   * before anything reads by them) and converts it; INVALID_ARGUMENT prefixed with
   * {@code label}.
   */
  static Prepared prepare(IngestService service, BatchValidator validator, VectorSchemaRoot root,
      DictionaryProvider dictionaries, BufferAllocator allocator, long requestId, String label) {
    IngestTarget target = validator.target();
    String table = Metrics.tableLabel(Arrays.asList(target.identifier().namespace().levels()),
        target.identifier().name());
    int rows = root.getRowCount();
    try {
      ArrowBatchCheck.check(root, dictionaries);
      byte[] ipc = validator.convert(root, dictionaries, allocator);
      return new Prepared(target, table, requestId, rows, ipc);
    } catch (SeException e) {
      IngestTrace.rejected(service.telemetry(), target.catalogId(), table, e);
      throw new SeException(e.code(), label + ": " + e.getMessage(), e);
    }
  }

  /**
   * Submits {@code batch} to its table's group commit. Exactly one of {@code onDurable} and
   * {@code onFailed} runs once the segment's outcome is known, then {@code onSettled}; if the
   * submission itself fails, {@code onSettled} runs and the exception is thrown.
   */
  static void commit(IngestService service, Prepared batch, Runnable onDurable,
      Consumer<Throwable> onFailed, Runnable onSettled) {
    IngestTarget target = batch.target();
    IngestTrace trace = IngestTrace.accepted(service.telemetry(), target.catalogId(),
        batch.table(), batch.requestId(), batch.rows(), batch.ipc().length);
    WalFrame frame = new WalFrame(target.operation(), target.schema().schemaId(),
        new long[] {batch.requestId()}, batch.rows(), batch.ipc(), batch.producer());
    try {
      service.committer(target).submit(frame).whenComplete((seq, error) -> {
        try {
          if (error == null) {
            trace.durable(seq);
            if (batch.producer() != null) {
              service.producers().durable(target.wal(), batch.producer(), seq,
                  batch.producerRetention());
            }
            onDurable.run();
          } else {
            trace.failed(error);
            onFailed.accept(error);
          }
        } finally {
          onSettled.run();
        }
      });
    } catch (RuntimeException e) {
      trace.failed(e);
      onSettled.run();
      throw e;
    }
  }
}
