package io.storageengine.broker;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.util.List;

/**
 * The content of {@code broker/queue.json}: the active broker's epoch and address, and every
 * task still owed. Only the broker holding {@code epoch} writes it, always by compare-and-swap.
 */
public record QueueDocument(
    @JsonProperty("epoch") long epoch,
    @JsonProperty("broker_address") String brokerAddress,
    @JsonProperty("tasks") List<Task> tasks) {

  /** Object key of the queue in cluster storage (ARCHITECTURE.md section 3.2). */
  public static final String KEY = "broker/queue.json";

  public QueueDocument {
    tasks = tasks == null ? List.of() : List.copyOf(tasks);
  }

  public byte[] toBytes() {
    return Json.toBytes(this);
  }

  /** Parses the stored queue; a damaged object is INVALID_JSON naming the key. */
  public static QueueDocument parse(byte[] data) {
    try {
      return Json.read(data, QueueDocument.class);
    } catch (SeException e) {
      throw new SeException(e.code(), KEY + ": " + e.getMessage());
    }
  }
}
