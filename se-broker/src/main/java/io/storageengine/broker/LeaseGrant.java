package io.storageengine.broker;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * Tasks leased to one worker.
 *
 * @param leaseMs how long each lease lasts without a heartbeat; workers heartbeat well within it
 * @param tasks the leased tasks, each with its {@code lease_id}
 */
public record LeaseGrant(@JsonProperty("lease_ms") long leaseMs, @JsonProperty("tasks") List<Task> tasks) {
  public LeaseGrant {
    tasks = tasks == null ? List.of() : List.copyOf(tasks);
  }
}
