package io.storageengine.ingest;

import io.storageengine.common.SeException;
import java.util.HashSet;
import java.util.Set;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * One stream of the native protocol (ARCHITECTURE.md 6.1): schema, header, then batches each
 * acknowledged with its request id once durable. See {@link IngestProtocol} for the wire format.
 */
final class NativeIngestion extends StreamIngestion {
  NativeIngestion(IngestService service, FlightStream stream, AckSender acks, String name) {
    super(service, stream, acks, name);
  }

  @Override
  void ingest(BufferAllocator allocator) throws Exception {
    Schema schema = stream.getSchema();
    if (!flow.next(stream)) {
      throw SeException.invalid("stream header: the stream ended before its header");
    }
    if (stream.getRoot().getRowCount() != 0) {
      throw SeException.invalid("stream header: must be a metadata-only message, got a batch "
          + "of %d rows", stream.getRoot().getRowCount());
    }
    IngestProtocol.Header header = IngestProtocol.parseHeader(stream.getLatestMetadata());
    TableIdentifier identifier = TableIdentifier.of(
        Namespace.of(header.namespace().toArray(String[]::new)), header.tableName());
    Table table = service.resolver().load(header.catalog(), identifier);
    IngestTarget target =
        TableResolver.target(header.catalog(), identifier, table, header.operation());
    BatchValidator validator =
        BatchValidator.forStream(target, schema, stream.getDictionaryProvider());
    service.committer(target); // registers the table before the first ack
    acks.ack(0);

    Set<Long> seen = new HashSet<>();
    while (true) {
      flow.awaitRoom();
      if (flow.failure() != null || !flow.next(stream)) {
        return;
      }
      long requestId = IngestProtocol.parseBatchRequestId(stream.getLatestMetadata());
      if (!seen.add(requestId)) {
        throw SeException.invalid(
            "batch app_metadata: field `request_id` %d is used twice in this stream", requestId);
      }
      VectorSchemaRoot root = stream.getRoot();
      if (root.getRowCount() == 0) {
        acks.ack(requestId); // nothing to make durable
        continue;
      }
      submit(validator, root, allocator, requestId, "batch request_id " + requestId,
          () -> acks.ack(requestId));
    }
  }

  @Override
  void succeed() {
    acks.complete();
  }
}
