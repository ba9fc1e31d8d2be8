package io.storageengine.broker;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import io.storageengine.common.SeException;
import java.util.Locale;

/**
 * Where a task is in its life. A task that succeeds is removed from the queue, so there is no
 * "done" state: the queue object holds only work that is still owed or has given up.
 */
public enum TaskState {
  /** Waiting for a worker; leasable once {@code not_before_ms} has passed. */
  PENDING,
  /** Held by one worker until {@code lease_expires_ms}; heartbeats extend the lease. */
  LEASED,
  /** Gave up after the bounded number of attempts; {@code last_error} says why. */
  FAILED;

  @JsonValue
  public String jsonName() {
    return name().toLowerCase(Locale.ROOT);
  }

  @JsonCreator
  public static TaskState fromJson(String value) {
    for (TaskState s : values()) {
      if (s.jsonName().equals(value)) {
        return s;
      }
    }
    throw SeException.invalid("unknown task state '%s' (expected pending, leased or failed)", value);
  }
}
