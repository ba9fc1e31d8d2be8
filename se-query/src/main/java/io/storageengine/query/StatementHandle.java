package io.storageengine.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Everything a statement ticket or a prepared statement handle carries: the principal whose call
 * created it, the tenant, the SQL, the pinned state of every table it reads ({@link SnapshotPin}:
 * snapshot, schema and the last WAL segment read on top; empty: read current snapshots) and the values bound to its parameters. Encoded as JSON inside Flight SQL's {@code statement_handle} /
 * {@code prepared_statement_handle}, so the server keeps no per-statement state and any server
 * instance can serve any call. A handle is trusted for nothing: its SQL is analyzed again, its
 * tenant must be the one the call selects and the caller may read, its owner must be the caller,
 * and its values are bound as values. (The handle is not signed: the owner keeps a handle or
 * ticket from serving another principal's calls, while a handle a client writes itself can do
 * no more than that client's own statements.)
 */
record StatementHandle(String owner, String catalogId, String sql, Map<String, SnapshotPin> pins,
    QueryParameters parameters) {
  StatementHandle(String owner, String catalogId, String sql, Map<String, SnapshotPin> pins) {
    this(owner, catalogId, sql, pins, QueryParameters.NONE);
  }

  /** The same statement with {@code values} bound (a new handle; handles are immutable). */
  StatementHandle withParameters(QueryParameters values) {
    return new StatementHandle(owner, catalogId, sql, pins, values);
  }

  /** The same statement reading the table states {@code pinned}. */
  StatementHandle withPins(Map<String, SnapshotPin> pinned) {
    return new StatementHandle(owner, catalogId, sql, pinned, parameters);
  }

  byte[] encode() {
    ObjectNode root = Json.object();
    root.put("owner", owner);
    root.put("catalog", catalogId);
    root.put("sql", sql);
    ObjectNode tables = root.putObject("pins");
    pins.forEach((key, pin) -> {
      ObjectNode node = tables.putObject(key);
      if (pin.snapshotId() == null) {
        node.putNull("snapshot");
      } else {
        node.put("snapshot", pin.snapshotId());
      }
      node.put("schema", pin.schemaId());
      if (pin.walThrough() != null) {
        node.put("wal", pin.walThrough());
      }
    });
    if (!parameters.isEmpty()) {
      root.set("parameters", parameters.toJson());
    }
    return Json.toBytes(root);
  }

  static StatementHandle decode(byte[] bytes) {
    JsonNode root;
    try {
      root = Json.parse(bytes);
    } catch (SeException e) {
      throw notAHandle();
    }
    if (!root.path("owner").isTextual() || !root.path("catalog").isTextual() || !root.path("sql").isTextual()
        || !root.path("pins").isObject()) {
      throw notAHandle();
    }
    Map<String, SnapshotPin> pins = new LinkedHashMap<>();
    root.path("pins").fields().forEachRemaining(entry -> {
      JsonNode snapshot = entry.getValue().path("snapshot");
      JsonNode wal = entry.getValue().path("wal");
      pins.put(entry.getKey(), new SnapshotPin(snapshot.isNumber() ? snapshot.asLong() : null,
          entry.getValue().path("schema").asInt(), wal.isNumber() ? wal.asLong() : null));
    });
    return new StatementHandle(root.path("owner").asText(), root.path("catalog").asText(), root.path("sql").asText(),
        pins, QueryParameters.fromJson(root.path("parameters")));
  }

  private static SeException notAHandle() {
    return new SeException(ErrorCode.INVALID_ARGUMENT, "ticket or handle is not a statement handle of this server");
  }
}
