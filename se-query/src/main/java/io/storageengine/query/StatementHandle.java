package io.storageengine.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a statement ticket carries from {@code GetFlightInfo} to {@code DoGet}: the tenant, the
 * SQL and the pinned state of every table it reads. Encoded as JSON inside Flight SQL's
 * {@code TicketStatementQuery.statement_handle}.
 */
record StatementHandle(String catalogId, String sql, Map<String, SnapshotPin> pins) {
  byte[] encode() {
    ObjectNode root = Json.object();
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
    });
    return Json.toBytes(root);
  }

  static StatementHandle decode(byte[] bytes) {
    JsonNode root;
    try {
      root = Json.parse(bytes);
    } catch (SeException e) {
      throw new SeException(ErrorCode.INVALID_ARGUMENT, "ticket is not a statement ticket of this server");
    }
    if (!root.path("catalog").isTextual() || !root.path("sql").isTextual() || !root.path("pins").isObject()) {
      throw new SeException(ErrorCode.INVALID_ARGUMENT, "ticket is not a statement ticket of this server");
    }
    Map<String, SnapshotPin> pins = new LinkedHashMap<>();
    root.path("pins").fields().forEachRemaining(entry -> {
      JsonNode snapshot = entry.getValue().path("snapshot");
      pins.put(entry.getKey(), new SnapshotPin(snapshot.isNumber() ? snapshot.asLong() : null,
          entry.getValue().path("schema").asInt()));
    });
    return new StatementHandle(root.path("catalog").asText(), root.path("sql").asText(), pins);
  }
}
