package io.storageengine.broker;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Map;

/**
 * One task as stored in {@code broker/queue.json} and as handed to a worker.
 *
 * @param key unique key, e.g. {@code reconcile/<catalog>/<table-uuid>}: at most one task per key
 * @param kind what to run ({@code reconcile}, {@code maintain}); selects the worker's handler
 * @param payload the handler's arguments
 * @param state where the task is in its life
 * @param attempts leases granted since the task was last (re)scheduled fresh
 * @param leaseId identifies the current lease; heartbeats and acknowledgements must name it
 * @param leaseOwner the worker holding the lease
 * @param leaseExpiresMs when the lease ends unless a heartbeat extends it (epoch millis)
 * @param notBeforeMs the task is not leased before this time (retry backoff)
 * @param lastError why the last attempt failed, if it did
 * @param rerun scheduled again while leased: run once more after the current lease completes
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Task(
    @JsonProperty("key") String key,
    @JsonProperty("kind") String kind,
    @JsonProperty("payload") Map<String, String> payload,
    @JsonProperty("state") TaskState state,
    @JsonProperty("attempts") int attempts,
    @JsonProperty("lease_id") String leaseId,
    @JsonProperty("lease_owner") String leaseOwner,
    @JsonProperty("lease_expires_ms") Long leaseExpiresMs,
    @JsonProperty("not_before_ms") long notBeforeMs,
    @JsonProperty("last_error") String lastError,
    @JsonProperty("rerun") boolean rerun) {

  /**
   * Payload field naming a group of tasks that never run at the same time: while a task of the
   * group is leased, no other task of the group is (the reconcile and the maintenance task of one
   * table, whose commits would otherwise conflict).
   */
  public static final String EXCLUSIVE_GROUP = "exclusive_group";

  public Task {
    payload = payload == null ? Map.of() : Map.copyOf(payload);
  }

  /** The task's {@link #EXCLUSIVE_GROUP}, or null. */
  @JsonIgnore
  public String exclusiveGroup() {
    return payload.get(EXCLUSIVE_GROUP);
  }
}
