package io.storageengine.ingest;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.wal.ProducerStamp;
import java.time.Duration;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The life of one incoming Flight SQL bulk ingest stream, read by a thread of its own (the
 * native protocol is read without one, see {@link NativeIngestion}): a child allocator with the
 * stream's memory limit, reading with backpressure, validation, submission to the table's group
 * commit, and exactly one end of the call.
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
    submit(validator, root, allocator, requestId, label, onDurable, null, null);
  }

  /** As above, the batch being the idempotent write {@code producer} (null: a plain one). */
  final void submit(BatchValidator validator, VectorSchemaRoot root, BufferAllocator allocator,
      long requestId, String label, Runnable onDurable, ProducerStamp producer,
      Duration producerRetention) throws InterruptedException {
    BatchIntake.Prepared batch = BatchIntake.prepare(service, validator, root,
        stream.getDictionaryProvider(), allocator, requestId, label);
    if (producer != null) {
      batch = batch.withProducer(producer, producerRetention);
    }
    long size = batch.ipc().length;
    flow.reserve(size);
    BatchIntake.commit(service, batch, onDurable, flow::fail, () -> flow.settled(size));
  }
}
