package io.storageengine.reconcile;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Objects;

/**
 * Whether a table's reconciliation keeps failing: what an operator needs to notice a stuck table.
 * A table is healthy until a pass fails; it is failing from its first failed pass until a pass
 * succeeds again.
 *
 * @param tableName the table's catalog name ({@code ns.table}) as last known, or null
 * @param failingSince when the first of the consecutive failures happened (null when healthy)
 * @param consecutiveFailures failed passes since the last successful one (0 when healthy)
 * @param lastError the last failure's code and message (null when healthy)
 * @param pendingFromSeq first unpublished WAL seq when the state was recorded (0: none)
 * @param pendingToSeq last WAL seq present when the state was recorded (0: none)
 */
public record ReconcileStatus(
    String tableName,
    Instant failingSince,
    int consecutiveFailures,
    String lastError,
    long pendingFromSeq,
    long pendingToSeq) {

  public static final ReconcileStatus HEALTHY = new ReconcileStatus(null, null, 0, null, 0, 0);

  public ReconcileStatus {
    if (consecutiveFailures < 0) {
      throw new IllegalArgumentException("consecutive failures must not be negative");
    }
    if ((consecutiveFailures > 0) != (failingSince != null)) {
      throw new IllegalArgumentException("a failing status needs its start time, a healthy one none");
    }
  }

  public boolean failing() {
    return consecutiveFailures > 0;
  }

  /** {@code healthy}, or {@code failing since <time>: <last error> (...)}: one line for humans. */
  public String describe() {
    if (!failing()) {
      return "healthy";
    }
    StringBuilder text = new StringBuilder("failing since ").append(failingSince).append(": ")
        .append(lastError).append(" (").append(consecutiveFailures).append(" consecutive ")
        .append(consecutiveFailures == 1 ? "failure" : "failures");
    if (pendingToSeq > 0) {
      text.append(", WAL ").append(pendingFromSeq).append("..").append(pendingToSeq)
          .append(" pending");
    }
    return text.append(')').toString();
  }

  /** The JSON form: {@code {"state":"healthy"}} or the failing fields. */
  public ObjectNode toJson() {
    ObjectNode json = Json.object();
    json.put("state", failing() ? "failing" : "healthy");
    if (tableName != null) {
      json.put("table", tableName);
    }
    if (failing()) {
      json.put("failing_since", failingSince.toString());
      json.put("consecutive_failures", consecutiveFailures);
      json.put("last_error", lastError);
      if (pendingToSeq > 0) {
        json.put("pending_from_seq", pendingFromSeq);
        json.put("pending_to_seq", pendingToSeq);
      }
    }
    return json;
  }

  /** Parses {@link #toJson()}; {@code source} names the input in errors. */
  public static ReconcileStatus fromJson(JsonNode json, String source) {
    Objects.requireNonNull(source, "source");
    String state = json.path("state").asText("");
    String table = json.hasNonNull("table") ? json.get("table").asText() : null;
    if (state.equals("healthy")) {
      return new ReconcileStatus(table, null, 0, null, 0, 0);
    }
    if (!state.equals("failing")) {
      throw corrupt(source, "field `state` must be \"healthy\" or \"failing\", got `" + state + "`");
    }
    Instant since;
    try {
      since = Instant.parse(json.path("failing_since").asText(""));
    } catch (DateTimeParseException e) {
      throw corrupt(source, "field `failing_since` must be an ISO-8601 instant");
    }
    int failures = json.path("consecutive_failures").asInt(0);
    if (failures <= 0) {
      throw corrupt(source, "field `consecutive_failures` must be a positive number");
    }
    return new ReconcileStatus(table, since, failures, json.path("last_error").asText(""),
        json.path("pending_from_seq").asLong(0), json.path("pending_to_seq").asLong(0));
  }

  private static SeException corrupt(String source, String detail) {
    return new SeException(ErrorCode.INTERNAL, "corrupt reconcile status " + source + ": " + detail);
  }
}
