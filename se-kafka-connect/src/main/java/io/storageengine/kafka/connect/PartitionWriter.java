package io.storageengine.kafka.connect;

import io.storageengine.ingest.IngestProtocol;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.wal.WalOperation;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Writes the records of one Kafka (topic, partition) to its table and tracks which offsets the
 * engine acknowledged.
 *
 * <p><b>Batches.</b> Rows are collected into one Arrow batch until {@code maxRecords}, a change
 * of operation or column set (a tombstone after upserts, a value with other fields), or
 * {@link #flush}. Each (operation, column set) has its own engine stream, opened on first use
 * and kept. On an entity table whose version column the connector does not know (the newest
 * arrival wins), every batch in flight is awaited before a batch goes to a different stream than
 * the previous one, so the engine receives the partition's operations per key in offset order
 * (one group commit per switch between upserts and deletes). With a version column the engine
 * orders each key's operations by version, and streams run side by side. Back-pressure is the
 * stream's: {@link IngestStream#send} blocks while {@link IngestClient#DEFAULT_MAX_IN_FLIGHT}
 * batches wait for their acknowledgement.
 *
 * <p><b>Offsets.</b> {@link #committableOffset} is one past the last offset of the longest
 * prefix of sent batches that the engine acknowledged: what may be committed to Kafka. Nothing
 * later is ever reported, so a restart re-delivers every record whose batch was not durable.
 *
 * <p><b>The exactly-once seam.</b> Every batch is identified by a {@link BatchSequence}: a
 * producer id and the batch's first and last Kafka offsets. The producer id is
 * {@code <connector>/<topic>/<partition>/<operation>/<column set>} (see {@link #producerIdOf}):
 * stable across task restarts and rebalances (one writer per partition at a time), and one per
 * engine stream, because the streams of a partition become durable in no fixed order between
 * them, while within one stream batches become durable in offset order. Batch boundaries depend
 * on how Connect split the records into {@code put} calls and on when {@code preCommit} flushed,
 * so a re-delivery from the committed offset X starts a batch at X again but may end it
 * elsewhere: a sequence that is only the first offset cannot tell a resent batch from a longer
 * one, and exact-match deduplication of (producer, first offset) would drop the new tail. What
 * works is the offset range: offsets of a partition only grow, so the engine keeps the highest
 * last offset it made durable per producer (H); a batch with last offset &lt;= H is a resend to
 * acknowledge again, one with first offset &gt; H is new, and one that straddles H is refused
 * with H or trimmed to (H, last] (simplest: the engine tells H when the stream opens and the
 * writer drops re-delivered rows at or below it). Until the engine's idempotent API is on main
 * this writer sends with the plain client: at least once (a batch whose acknowledgement was lost
 * is written again after a restart). On an entity table whose version is the Kafka offset or
 * timestamp such a resend changes nothing (same key, same version); on an append table it
 * duplicates rows.
 */
final class PartitionWriter implements AutoCloseable {
  /** Identifies a batch for idempotent ingestion: producer id and the Kafka offsets it covers. */
  record BatchSequence(String producerId, long firstOffset, long lastOffset) {
  }

  private record StreamKey(WalOperation operation, List<String> columns) {
  }

  private record Sent(BatchSequence sequence, CompletableFuture<Long> ack) {
  }

  private final String producerId;
  private final EngineTable table;
  private final IngestClient client;
  private final BufferAllocator allocator;
  private final String catalog;
  private final int maxRecords;
  /** An entity table whose version the connector does not know: the newest arrival wins. */
  private final boolean orderedByArrival;
  private final Map<StreamKey, IngestStream> streams = new HashMap<>();
  private final Deque<Sent> inFlight = new ArrayDeque<>();
  private BatchBuilder batch;
  private StreamKey batchKey;
  private StreamKey lastSentKey;
  private long firstOffset;
  private long lastOffset;
  private long committable = -1;
  /** A skipped offset after the batches in flight, counted once they are all acknowledged. */
  private long pendingSkip = -1;

  PartitionWriter(String producerId, String catalog, EngineTable table, IngestClient client,
      BufferAllocator allocator, int maxRecords) {
    this.producerId = producerId;
    this.catalog = catalog;
    this.table = table;
    this.client = client;
    this.allocator = allocator;
    this.maxRecords = maxRecords;
    this.orderedByArrival = table.entity() && table.versionColumn().isEmpty();
  }

  String producerId() {
    return producerId;
  }

  /** Adds the row of the record at {@code offset}; may send a batch (and block for back-pressure). */
  void write(long offset, RecordMapper.Row row) throws InterruptedException {
    StreamKey key = new StreamKey(row.operation(), row.columns());
    if (batch != null && !key.equals(batchKey)) {
      send();
    }
    if (batch == null) {
      batch = new BatchBuilder(BatchBuilder.schema(table, row.columns()), allocator);
      batchKey = key;
      firstOffset = offset;
    }
    batch.add(row.values());
    lastOffset = offset;
    if (batch.rows() >= maxRecords) {
      send();
    }
  }

  /**
   * Notes that the record at {@code offset} writes nothing (a tombstone on an append table, a
   * record sent to the dead-letter queue): once every batch before it is acknowledged, it counts
   * as done.
   */
  void skip(long offset) {
    if (batch == null && inFlight.isEmpty()) {
      committable = offset + 1;
    } else if (batch != null) {
      lastOffset = offset;
    } else {
      pendingSkip = offset;
    }
  }

  /** Sends the batch being collected, if any. */
  void flush() throws InterruptedException {
    if (batch != null) {
      send();
    }
  }

  /**
   * The offset to commit for this partition (one past the last acknowledged record), if any.
   * Throws the stream's failure if a batch was refused or its stream failed.
   */
  OptionalLong committableOffset() throws ExecutionException, InterruptedException {
    while (!inFlight.isEmpty() && inFlight.peekFirst().ack().isDone()) {
      Sent sent = inFlight.pollFirst();
      sent.ack().get(); // throws the failure
      committable = sent.sequence().lastOffset() + 1;
    }
    if (inFlight.isEmpty() && pendingSkip >= 0) {
      committable = Math.max(committable, pendingSkip + 1);
      pendingSkip = -1;
    }
    return committable < 0 ? OptionalLong.empty() : OptionalLong.of(committable);
  }

  /** Waits until every sent batch is acknowledged; throws the first failure. */
  void awaitAcknowledged() throws ExecutionException, InterruptedException {
    for (Sent sent : inFlight) {
      sent.ack().get();
    }
    committableOffset();
  }

  /**
   * The producer id of one stream of this partition: the partition's id, the operation and the
   * column set (its {@link List#hashCode}, which Java defines from the names, so every JVM
   * derives the same id).
   */
  static String producerIdOf(String partitionProducerId, WalOperation operation, List<String> columns) {
    return partitionProducerId + "/" + operation.name().toLowerCase(java.util.Locale.ROOT) + "/"
        + Integer.toHexString(columns.hashCode());
  }

  private void send() throws InterruptedException {
    BatchSequence sequence = new BatchSequence(producerIdOf(producerId, batchKey.operation(), batchKey.columns()),
        firstOffset, lastOffset);
    try (BatchBuilder sending = batch) {
      batch = null;
      if (orderedByArrival && lastSentKey != null && !lastSentKey.equals(batchKey) && !inFlight.isEmpty()) {
        try {
          awaitAcknowledged();
        } catch (ExecutionException e) {
          throw new StreamFailedException(e.getCause());
        }
      }
      IngestStream stream = streams.get(batchKey);
      if (stream == null) {
        stream = client.open(new IngestProtocol.Header(catalog, table.name().namespace(), table.name().name(),
            batchKey.operation()), sending.root().getSchema(), IngestClient.DEFAULT_MAX_IN_FLIGHT);
        streams.put(batchKey, stream);
      }
      inFlight.addLast(new Sent(sequence, stream.send(sending.root())));
      lastSentKey = batchKey;
    }
  }

  /** Closes the streams without waiting; batches not acknowledged are re-delivered by Kafka. */
  @Override
  public void close() {
    if (batch != null) {
      batch.close();
      batch = null;
    }
    for (IngestStream stream : streams.values()) {
      stream.close();
    }
    streams.clear();
    inFlight.clear();
  }

  /** A stream of this writer failed; the writer must be discarded. */
  static final class StreamFailedException extends RuntimeException {
    StreamFailedException(Throwable cause) {
      super(cause.getMessage(), cause);
    }
  }
}
