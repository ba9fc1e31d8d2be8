package io.storageengine.kafka.connect;

import io.storageengine.common.SeException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes records to engine tables, one {@link PartitionWriter} per assigned (topic, partition).
 *
 * <p>A record the table cannot take goes to Connect's {@link ErrantRecordReporter} (the
 * dead-letter queue) when the connector has {@code errors.tolerance=all}; otherwise the task fails
 * naming the record and the field. A batch the engine refuses fails the task. Streams are
 * idempotent and reconnect and resend by themselves; one that gives up (the engine down for
 * longer than its reconnect attempts) rewinds its partition to the last acknowledged offset, and
 * Kafka delivers those records again: the partition's new writer drops every record the engine
 * already has durable ({@link PartitionWriter}), so each record is written exactly once, also
 * across task restarts and rebalances. An engine
 * that cannot be reached while a table is described makes {@link #put} throw Connect's
 * {@link RetriableException} before anything of the call is written, so Connect delivers the
 * same records again after a back-off.
 *
 * <p>{@link #preCommit} sends what is collected and returns, per partition, only offsets the
 * engine acknowledged.
 */
public final class EngineSinkTask extends SinkTask {
  private static final Logger LOG = LoggerFactory.getLogger(EngineSinkTask.class);
  private static final Duration RETRY_BACKOFF = Duration.ofMillis(500);
  /** The task's Arrow memory: batches being built and the streams' copies. */
  private static final long MEMORY_LIMIT = 1L << 30;

  private EngineSinkConfig config;
  private String connectorName;
  private boolean tolerateErrors;
  private ErrantRecordReporter reporter;
  private BufferAllocator allocator;
  private EngineConnection engine;
  private final Map<String, RecordMapper> mappers = new HashMap<>();
  private final Map<String, EngineTable> tables = new HashMap<>();
  private final Map<TopicPartition, PartitionWriter> writers = new HashMap<>();
  /** Where each partition's current writer started: the rewind point while nothing is acknowledged. */
  private final Map<TopicPartition, Long> startOffsets = new HashMap<>();

  @Override
  public String version() {
    return EngineSinkConnector.VERSION;
  }

  @Override
  public void start(Map<String, String> properties) {
    config = new EngineSinkConfig(properties);
    connectorName = properties.getOrDefault("name", "se-sink");
    tolerateErrors = "all".equalsIgnoreCase(properties.getOrDefault("errors.tolerance", "none").trim());
    try {
      reporter = context.errantRecordReporter();
    } catch (NoSuchMethodError | NoClassDefFoundError e) {
      reporter = null; // a worker older than Connect 2.6
    }
    allocator = new RootAllocator(MEMORY_LIMIT);
    engine = EngineConnection.open(config, allocator);
  }

  @Override
  public void put(Collection<SinkRecord> records) {
    // Every table first: a retriable failure here leaves nothing half-written for Connect's redelivery.
    for (SinkRecord record : records) {
      table(record.topic());
    }
    Set<TopicPartition> rewound = new HashSet<>();
    for (SinkRecord record : records) {
      TopicPartition partition = new TopicPartition(record.topic(), record.kafkaPartition());
      if (rewound.contains(partition)) {
        continue; // delivered again after the rewind
      }
      try {
        PartitionWriter writer = writer(partition, record.kafkaOffset());
        RecordMapper.Row row;
        try {
          row = mapper(record.topic()).map(record);
        } catch (InvalidRecordException e) {
          invalid(record, e);
          writer.skip(record.kafkaOffset());
          continue;
        }
        if (row == null) {
          writer.skip(record.kafkaOffset());
        } else {
          writer.write(record.kafkaOffset(), row);
        }
      } catch (PartitionWriter.StreamFailedException | FlightRuntimeException e) {
        recover(partition, e);
        rewound.add(partition);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ConnectException("interrupted while writing " + partition, e);
      }
    }
    for (TopicPartition partition : Set.copyOf(writers.keySet())) {
      if (!rewound.contains(partition)) {
        committable(partition);
      }
    }
  }

  @Override
  public Map<TopicPartition, OffsetAndMetadata> preCommit(Map<TopicPartition, OffsetAndMetadata> currentOffsets) {
    Map<TopicPartition, OffsetAndMetadata> acknowledged = new HashMap<>();
    for (TopicPartition partition : Set.copyOf(writers.keySet())) {
      try {
        writers.get(partition).flush();
      } catch (PartitionWriter.StreamFailedException | FlightRuntimeException e) {
        recover(partition, e);
        continue;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ConnectException("interrupted while flushing " + partition, e);
      }
      committable(partition).ifPresent(offset -> acknowledged.put(partition, new OffsetAndMetadata(offset)));
    }
    return acknowledged;
  }

  @Override
  public void flush(Map<TopicPartition, OffsetAndMetadata> currentOffsets) {
    // preCommit does the work and never returns an offset that is not durable.
  }

  @Override
  public void close(Collection<TopicPartition> partitions) {
    for (TopicPartition partition : partitions) {
      PartitionWriter writer = writers.remove(partition);
      startOffsets.remove(partition);
      if (writer != null) {
        writer.close();
      }
    }
  }

  @Override
  public void stop() {
    close(Set.copyOf(writers.keySet()));
    try {
      if (engine != null) {
        engine.close();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      if (allocator != null) {
        allocator.close();
      }
    }
  }

  private PartitionWriter writer(TopicPartition partition, long offset) {
    PartitionWriter writer = writers.get(partition);
    if (writer == null) {
      EngineTable table = table(partition.topic());
      writer = new PartitionWriter(connectorName, partition, config.catalog(), table, engine.ingest(), allocator,
          config.batchRecords());
      writers.put(partition, writer);
      startOffsets.put(partition, offset);
    }
    return writer;
  }

  private EngineTable table(String topic) {
    EngineSinkConfig.TableName name = config.tableOf(topic);
    return tables.computeIfAbsent(name.toString(), n -> {
      try {
        return engine.describe(name, config);
      } catch (FlightRuntimeException e) {
        String message = "topic " + topic + ": table " + config.catalog() + "." + name + ": " + e.getMessage();
        if (e.status().code() == FlightStatusCode.UNAVAILABLE || e.status().code() == FlightStatusCode.TIMED_OUT) {
          context.timeout(RETRY_BACKOFF.toMillis());
          throw new RetriableException(message, e);
        }
        throw new ConnectException(message, e);
      } catch (SeException e) {
        throw new ConnectException("topic " + topic + ": table " + config.catalog() + "." + name + ": " + e.getMessage(), e);
      }
    });
  }

  private RecordMapper mapper(String topic) {
    return mappers.computeIfAbsent(topic, t -> new RecordMapper(table(t), config.versionSource()));
  }

  /** The partition's committable offset; a failed stream rewinds the partition. */
  private OptionalLong committable(TopicPartition partition) {
    try {
      return writers.get(partition).committableOffset();
    } catch (ExecutionException e) {
      recover(partition, e.getCause());
      return OptionalLong.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ConnectException("interrupted while reading acknowledgements of " + partition, e);
    }
  }

  private void invalid(SinkRecord record, InvalidRecordException e) {
    String message = "record " + record.topic() + "/" + record.kafkaPartition() + "@" + record.kafkaOffset()
        + " cannot be written to " + config.catalog() + "." + config.tableOf(record.topic()) + ": " + e.getMessage();
    if (!tolerateErrors || reporter == null) {
      throw new ConnectException(message);
    }
    reporter.report(record, new ConnectException(message));
  }

  /**
   * After a stream failure: a refused batch (the engine said the data or the target is wrong)
   * fails the task; anything else discards the partition's writer and seeks the partition back
   * to its last acknowledged offset, so Kafka delivers the unacknowledged records again.
   */
  private void recover(TopicPartition partition, Throwable failure) {
    Throwable cause = failure instanceof PartitionWriter.StreamFailedException && failure.getCause() != null
        ? failure.getCause() : failure;
    PartitionWriter writer = writers.remove(partition);
    Long started = startOffsets.remove(partition);
    long start = started == null ? 0 : started;
    OptionalLong acknowledged = OptionalLong.empty();
    if (writer != null) {
      try {
        acknowledged = writer.committableOffset();
      } catch (ExecutionException | InterruptedException e) {
        // the first failure is the one handled here
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
      }
      writer.close();
    }
    FlightStatusCode code = cause instanceof FlightRuntimeException f ? f.status().code() : FlightStatusCode.UNKNOWN;
    if (code == FlightStatusCode.INVALID_ARGUMENT || code == FlightStatusCode.NOT_FOUND
        || code == FlightStatusCode.UNAUTHENTICATED || code == FlightStatusCode.UNAUTHORIZED) {
      throw new ConnectException("partition " + partition + ": the engine refused a batch of table "
          + config.catalog() + "." + config.tableOf(partition.topic()) + ": " + cause.getMessage(), cause);
    }
    long rewindTo = Math.max(start, acknowledged.orElse(start));
    LOG.warn("partition {}: engine stream failed ({}: {}); delivering again from offset {}",
        partition, code, cause.getMessage(), rewindTo);
    context.offset(partition, rewindTo);
    try {
      Thread.sleep(RETRY_BACKOFF.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
