package io.storageengine.kafka.connect;

import io.storageengine.ingest.IngestProtocol;
import io.storageengine.ingest.client.IdempotentIngestStream;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.wal.ProducerStamp;
import io.storageengine.wal.WalOperation;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.regex.Pattern;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the records of one Kafka (topic, partition) to its table, exactly once, and tracks
 * which offsets the engine acknowledged.
 *
 * <p><b>Batches.</b> Rows are collected into one Arrow batch until {@code maxRecords}, a change
 * of operation or column set (a tombstone after upserts, a value with other fields), or
 * {@link #flush}. A batch therefore holds a contiguous run of the partition's records of one
 * (operation, column set). Each (operation, column set) has its own engine stream, opened on
 * first use and kept. On an entity table whose version column the connector does not know (the
 * newest arrival wins), every batch in flight is awaited before a batch goes to a different
 * stream than the previous one, so the engine receives the partition's operations per key in
 * offset order (one group commit per switch between upserts and deletes). With a version column
 * the engine orders each key's operations by version, and streams run side by side.
 * Back-pressure is the stream's: {@link IdempotentIngestStream#send} blocks while
 * {@link IngestClient#DEFAULT_MAX_IN_FLIGHT} batches wait for their acknowledgement.
 *
 * <p><b>Exactly once.</b> Every stream is idempotent, with a producer id per (connector, topic,
 * partition, operation, column set) ({@link #producerIdOf}), stable across task restarts and
 * rebalances (one writer per partition at a time), and every batch's sequence is the highest
 * Kafka offset it covers: monotonic per producer, gaps allowed. A broken stream reconnects and
 * resends its unacknowledged batches with their sequences, so those land once. The engine keeps
 * each producer's durable batches a prefix of what it sent (a failed write withdraws the
 * producer's later frames), so its highest durable sequence H says: every record of this
 * stream at or below H is durable, none above it. Before a stream's first record, the writer
 * asks the engine for H ({@link IngestClient#lastSequence}) and drops every record of the
 * stream at or below it ({@link #droppedRecords}): whatever Kafka delivers again after a
 * restart, a rebalance or a rewind, and however it cuts the batches, is written once. The
 * engine's answer waits for the table's group commit on that server, so a batch of a stream
 * that broke just before cannot become durable after it.
 *
 * <p><b>Offsets.</b> {@link #committableOffset} is one past the last offset of the longest
 * prefix of sent batches that the engine acknowledged: what may be committed to Kafka. Dropped
 * and skipped records count as done once every batch before them is acknowledged.
 */
final class PartitionWriter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionWriter.class);

  /** A batch sent: the Kafka offsets it covers (its sequence is the last) and its ack. */
  private record StreamKey(WalOperation operation, List<String> columns) {
  }

  private record Sent(long firstOffset, long lastOffset, CompletableFuture<Long> ack) {
  }

  /** What a connector or topic name may hold to appear in a producer id as it is. */
  private static final Pattern PRODUCER_ID_CHARS = Pattern.compile("[A-Za-z0-9._:-]+");

  private final String connector;
  private final TopicPartition partition;
  private final EngineTable table;
  private final IngestClient client;
  private final BufferAllocator allocator;
  private final String catalog;
  private final int maxRecords;
  /** An entity table whose version the connector does not know: the newest arrival wins. */
  private final boolean orderedByArrival;
  private final Map<StreamKey, IdempotentIngestStream> streams = new HashMap<>();
  /** Per stream: the highest offset durable in the engine when the writer started it (-1: none). */
  private final Map<StreamKey, Long> resumeAfter = new HashMap<>();
  private long dropped;
  private final Deque<Sent> inFlight = new ArrayDeque<>();
  private BatchBuilder batch;
  private StreamKey batchKey;
  private StreamKey lastSentKey;
  private long firstOffset;
  private long lastOffset;
  private long committable = -1;
  /** A skipped offset after the batches in flight, counted once they are all acknowledged. */
  private long pendingSkip = -1;

  PartitionWriter(String connector, TopicPartition partition, String catalog, EngineTable table,
      IngestClient client, BufferAllocator allocator, int maxRecords) {
    this.connector = connector;
    this.partition = partition;
    this.catalog = catalog;
    this.table = table;
    this.client = client;
    this.allocator = allocator;
    this.maxRecords = maxRecords;
    this.orderedByArrival = table.entity() && table.versionColumn().isEmpty();
  }

  /** Records dropped because the engine already had them durable (delivered again). */
  long droppedRecords() {
    return dropped;
  }

  /**
   * Adds the row of the record at {@code offset}, or drops it when its stream already has it
   * durable; may send a batch (and block for back-pressure). The first record of a stream asks
   * the engine where the stream resumes (a {@code FlightRuntimeException} when it cannot).
   */
  void write(long offset, RecordMapper.Row row) throws InterruptedException {
    StreamKey key = new StreamKey(row.operation(), row.columns());
    if (offset <= resumeAfter(key)) {
      dropped++;
      skip(offset);
      return;
    }
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
      committable = sent.lastOffset() + 1;
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
   * The producer id of one stream of a partition:
   * {@code kafka/<connector>/<topic>/<partition>/<operation>/<column set>}, the column set as the
   * first 16 hex digits of the SHA-256 of its names (in order, NUL-separated), so every JVM
   * derives the same id. A connector name with a character a producer id may not hold, or an id
   * longer than {@value ProducerStamp#MAX_PRODUCER_ID_LENGTH} characters, replaces
   * {@code <connector>/<topic>} by {@code h<32 hex digits of the SHA-256 of both>}.
   */
  static String producerIdOf(String connector, TopicPartition partition, WalOperation operation, List<String> columns) {
    String tail = "/" + partition.partition() + "/" + operation.name().toLowerCase(Locale.ROOT) + "/"
        + sha256(String.join("\0", columns)).substring(0, 16);
    String id = "kafka/" + connector + "/" + partition.topic() + tail;
    if (id.length() <= ProducerStamp.MAX_PRODUCER_ID_LENGTH && PRODUCER_ID_CHARS.matcher(connector).matches()
        && PRODUCER_ID_CHARS.matcher(partition.topic()).matches()) {
      return id;
    }
    return "kafka/h" + sha256(connector + "\0" + partition.topic()).substring(0, 32) + tail;
  }

  private static String sha256(String text) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }

  /** The highest offset of {@code key}'s stream durable in the engine (-1: none), asked once. */
  private long resumeAfter(StreamKey key) {
    Long known = resumeAfter.get(key);
    if (known != null) {
      return known;
    }
    String producerId = producerIdOf(connector, partition, key.operation(), key.columns());
    long last = client.lastSequence(catalog, table.name().namespace(), table.name().name(), producerId).orElse(-1);
    if (last >= 0) {
      LOG.info("partition {}: producer {} has offsets through {} durable in {}.{}; records up to it are dropped",
          partition, producerId, last, catalog, table.name());
    }
    resumeAfter.put(key, last);
    return last;
  }

  private void send() throws InterruptedException {
    try (BatchBuilder sending = batch) {
      batch = null;
      if (orderedByArrival && lastSentKey != null && !lastSentKey.equals(batchKey) && !inFlight.isEmpty()) {
        try {
          awaitAcknowledged();
        } catch (ExecutionException e) {
          throw new StreamFailedException(e.getCause());
        }
      }
      IdempotentIngestStream stream = streams.get(batchKey);
      if (stream == null) {
        stream = client.openIdempotent(new IngestProtocol.Header(catalog, table.name().namespace(), table.name().name(),
            batchKey.operation(), producerIdOf(connector, partition, batchKey.operation(), batchKey.columns())),
            sending.root().getSchema(), IngestClient.DEFAULT_MAX_IN_FLIGHT, IdempotentIngestStream.DEFAULT_ATTEMPTS,
            IdempotentIngestStream.DEFAULT_BACKOFF);
        streams.put(batchKey, stream);
      }
      inFlight.addLast(new Sent(firstOffset, lastOffset, stream.send(sending.root(), lastOffset)));
      lastSentKey = batchKey;
    }
  }

  /** Closes the streams without waiting; batches not acknowledged are re-delivered by Kafka. */
  @Override
  public void close() {
    if (dropped > 0) {
      LOG.info("partition {}: dropped {} records delivered again that the engine had durable", partition, dropped);
    }
    if (batch != null) {
      batch.close();
      batch = null;
    }
    for (IdempotentIngestStream stream : streams.values()) {
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
