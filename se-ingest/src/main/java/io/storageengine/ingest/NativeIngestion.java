package io.storageengine.ingest;

import io.grpc.ServerCall;
import io.storageengine.common.SeException;
import io.storageengine.wal.ProducerStamp;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * One stream of the native protocol (ARCHITECTURE.md 6.1): schema, header, then batches each
 * acknowledged with its request id once durable. See {@link IngestProtocol} for the wire format;
 * read without a thread of its own as {@link PushIngestion} describes.
 */
final class NativeIngestion extends PushIngestion {
  private final Set<Long> seen = new HashSet<>();
  private Schema schema;
  private DictionaryProvider dictionaries;
  /** Null until the header named the table. */
  private BatchValidator validator;
  /** The stream's producer id (null: not idempotent) and its table's producer retention. */
  private String producerId;
  private Duration producerRetention;

  NativeIngestion(IngestService service, ServerCall<byte[], byte[]> call, String name) {
    // The router holds the first message (the schema). The header follows it at once and holds
    // no budget: ask for it now, so admission takes no round trip between the two.
    super(service, call, name, true);
  }

  @Override
  void schemaArrived(Schema schema, DictionaryProvider dictionaries) {
    this.schema = schema;
    this.dictionaries = dictionaries;
  }

  /** The header, or a batch of {@code rows} now loaded in the stream's root. */
  @Override
  void message(int rows, byte[] appMetadata) {
    if (validator == null) {
      header(rows, appMetadata);
      return;
    }
    IngestProtocol.BatchMetadata metadata = IngestProtocol.parseBatch(appMetadata);
    long requestId = metadata.requestId();
    if (!seen.add(requestId)) {
      throw SeException.invalid(
          "batch app_metadata: field `request_id` %d is used twice in this stream", requestId);
    }
    IdempotentBatches.check(producerId, metadata);
    if (rows == 0) {
      call.ack(requestId); // nothing to make durable
      return;
    }
    ProducerStamp stamp = null;
    if (producerId != null) {
      if (service.producers().isDurable(validator.target().wal(), producerId, metadata.sequence(),
          producerRetention)) {
        skipLoaded();
        call.send(IngestProtocol.encodeDuplicateAck(requestId)); // durable already: not again
        return;
      }
      stamp = new ProducerStamp(producerId, metadata.sequence(), System.currentTimeMillis());
    }
    submit(validator, requestId, "batch request_id " + requestId, () -> call.ack(requestId),
        stamp, producerRetention);
  }

  @Override
  void inputFinished() {
    if (validator == null) {
      throw SeException.invalid("stream header: the stream ended before its header");
    }
  }

  private void header(int rows, byte[] appMetadata) {
    if (rows != 0) {
      throw SeException.invalid("stream header: must be a metadata-only message, got a batch "
          + "of %d rows", rows);
    }
    IngestProtocol.Header header = IngestProtocol.parseHeader(appMetadata);
    TableIdentifier identifier = TableIdentifier.of(
        Namespace.of(header.namespace().toArray(String[]::new)), header.tableName());
    Table table = service.resolver().load(header.catalog(), identifier);
    IngestTarget target =
        TableResolver.target(header.catalog(), identifier, table, header.operation());
    BatchValidator forStream = BatchValidator.forStream(target, schema, dictionaries);
    service.committer(target); // registers the table before the first ack
    if (header.producerId() != null) {
      producerRetention = IdempotentBatches.open(service, target, table, header.producerId());
      producerId = header.producerId();
    }
    validator = forStream;
    call.ack(0);
    admitted();
  }
}
