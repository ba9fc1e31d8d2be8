package io.storageengine.broker;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/** JSON bodies of the broker's HTTP API ({@code /broker/v1/...}), shared by service and client. */
public final class BrokerMessages {
  private BrokerMessages() {}

  /** POST /broker/v1/schedule. */
  public record ScheduleRequest(
      @JsonProperty("key") String key,
      @JsonProperty("kind") String kind,
      @JsonProperty("payload") Map<String, String> payload) {}

  /** Answer to a schedule. */
  public record ScheduleResponse(@JsonProperty("outcome") ScheduleOutcome outcome) {}

  /** POST /broker/v1/lease; an empty {@code kinds} means any kind. */
  public record LeaseRequest(
      @JsonProperty("worker") String worker,
      @JsonProperty("kinds") List<String> kinds,
      @JsonProperty("max") int max) {}

  /** POST /broker/v1/heartbeat. */
  public record HeartbeatRequest(@JsonProperty("key") String key, @JsonProperty("lease_id") String leaseId) {}

  /** Answer to a heartbeat: the lease's new expiry. */
  public record HeartbeatResponse(@JsonProperty("lease_expires_ms") long leaseExpiresMs) {}

  /** POST /broker/v1/ack; {@code error} and {@code retry_after_ms} only for failures. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record AckRequest(
      @JsonProperty("key") String key,
      @JsonProperty("lease_id") String leaseId,
      @JsonProperty("success") boolean success,
      @JsonProperty("error") String error,
      @JsonProperty("retry_after_ms") Long retryAfterMs) {}

  /** Answer to an acknowledgement. */
  public record AckResponse(@JsonProperty("outcome") AckOutcome outcome) {}
}
