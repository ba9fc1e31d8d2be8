package io.storageengine.ingest;

import io.storageengine.catalog.TableSettings;
import io.storageengine.common.SeException;
import java.time.Duration;
import org.apache.iceberg.Table;

/**
 * The rules of idempotent streams shared by the native protocol and bulk ingest: a stream with
 * a producer id numbers every batch with a sequence, a stream without one numbers none, and a
 * batch's frame carries its (producer, sequence) so readers can skip a second copy.
 */
final class IdempotentBatches {
  private IdempotentBatches() {}

  /**
   * A stream of {@code target} with {@code producerId} opens: catches the table's producer
   * windows up with its WAL, lets the committer take the producer's frames again after an
   * earlier failure ({@link TableCommitter#producerOpened}) and returns the table's producer
   * retention.
   */
  static Duration open(IngestService service, IngestTarget target, Table table, String producerId) {
    Duration retention = TableSettings.producerRetention(table);
    service.producers().open(target.wal(), retention);
    service.committer(target).producerOpened(producerId);
    return retention;
  }

  /** INVALID_ARGUMENT naming {@code sequence} unless the batch has one exactly when the stream has a producer. */
  static void check(String producerId, IngestProtocol.BatchMetadata metadata) {
    if (producerId == null && metadata.sequence() != null) {
      throw SeException.invalid("batch app_metadata: field `sequence` needs a stream with a "
          + "producer id (header field `producer_id`)");
    }
    if (producerId != null && metadata.sequence() == null) {
      throw SeException.invalid("batch app_metadata: missing field `sequence` (every batch of a "
          + "stream with a producer id carries one)");
    }
  }
}
