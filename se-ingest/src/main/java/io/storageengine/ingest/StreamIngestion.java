package io.storageengine.ingest;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.common.telemetry.IngestTrace;
import io.storageengine.common.telemetry.Metrics;
import java.util.Arrays;
import io.storageengine.wal.ArrowBatchCheck;
import io.storageengine.wal.WalFrame;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The life of one incoming DoPut stream, shared by the native protocol and Flight SQL bulk
 * ingest: a child allocator with the stream's memory limit, reading with backpressure,
 * validation, submission to the table's group commit, and exactly one end of the call.
 *
 * <p>However the stream ends, the reader first waits until every submitted batch is settled, so
 * acks of durable batches still reach the client before the final status, and no flush callback
 * outlives the stream.
 */
abstract class StreamIngestion implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(StreamIngestion.class);

  final IngestService service;
  final FlightStream stream;
  final AckSender acks;
  final StreamFlow flow;
  private final String name;

  StreamIngestion(IngestService service, FlightStream stream, AckSender acks, String name) {
    this.service = service;
    this.stream = stream;
    this.acks = acks;
    this.flow = service.newFlow();
    this.name = name;
  }

  /** Reads and submits the whole stream; returns normally when the client finished sending. */
  abstract void ingest(BufferAllocator allocator) throws Exception;

  /** Sends the success response (after every batch is durable) and completes the call. */
  abstract void succeed();

  @Override
  public final void run() {
    try (BufferAllocator allocator = service.streamAllocator(name)) {
      try {
        ingest(allocator);
      } catch (Throwable t) {
        flow.fail(t);
      } finally {
        flow.awaitSettled();
      }
    } catch (RuntimeException e) {
      // Closing the allocator found leaked memory: a bug, never the client's fault.
      LOG.error("stream {} leaked Arrow memory", name, e);
      flow.fail(new SeException(ErrorCode.INTERNAL, "internal error during ingestion"));
    }
    Throwable failure = flow.failure();
    if (failure == null) {
      succeed();
    } else {
      LOG.debug("stream {} failed: {}", name, failure.toString());
      acks.fail(failure);
    }
  }

  /** Validates the current batch, waits for room and submits it; {@code onDurable} runs on ack. */
  final void submit(BatchValidator validator, VectorSchemaRoot root, BufferAllocator allocator,
      long requestId, String label, Runnable onDurable) throws InterruptedException {
    int rows = root.getRowCount();
    IngestTarget target = validator.target();
    String table = Metrics.tableLabel(Arrays.asList(target.identifier().namespace().levels()), target.identifier().name());
    byte[] ipc;
    try {
      // Offsets, UTF-8, dictionary indices and nested lengths, before anything reads by them.
      ArrowBatchCheck.check(root, stream.getDictionaryProvider());
      ipc = validator.convert(root, stream.getDictionaryProvider(), allocator);
    } catch (SeException e) {
      IngestTrace.rejected(service.telemetry(), target.catalogId(), table, e);
      throw new SeException(e.code(), label + ": " + e.getMessage(), e);
    }
    flow.reserve(ipc.length);
    IngestTrace trace = IngestTrace.accepted(service.telemetry(), target.catalogId(), table, requestId, rows,
        ipc.length);
    WalFrame frame = new WalFrame(target.operation(), target.schema().schemaId(),
        new long[] {requestId}, rows, ipc);
    TableCommitter committer = service.committer(target);
    try {
      committer.submit(frame).whenComplete((seq, error) -> {
        try {
          if (error == null) {
            trace.durable(seq);
            onDurable.run();
          } else {
            trace.failed(error);
            flow.fail(error);
          }
        } finally {
          flow.settled(ipc.length);
        }
      });
    } catch (RuntimeException e) {
      trace.failed(e);
      flow.settled(ipc.length);
      throw e;
    }
  }
}
