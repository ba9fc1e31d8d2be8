package io.storageengine.kafka.connect;

/**
 * A record the table cannot take (a field of the wrong type, a null in a required column, an
 * unknown field, a missing key). The message names the field; the task adds the record's
 * topic, partition and offset and sends the record to the dead-letter queue or fails.
 */
final class InvalidRecordException extends RuntimeException {
  InvalidRecordException(String message) {
    super(message, null, false, false);
  }
}
