package io.storageengine.stress;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.Json;
import java.util.List;

/**
 * The outcome of comparing one table, read through one reader, with what the producers were told
 * was acknowledged.
 *
 * @param table the table
 * @param reader {@code flight_sql} or {@code iceberg}
 * @param rowsRead rows the reader returned
 * @param expected append: sent rows (acknowledged or not); entity: keys the model knows
 * @param verified append: sent rows present exactly once; entity: keys whose row (or absence) is
 *     the outcome of the key's last sent operation
 * @param missing append: sent rows absent; entity: keys whose last sent operation is an upsert
 *     but whose row is absent
 * @param duplicated rows present more than once (append: by row id; entity: by key)
 * @param wrong entity: keys showing a stale version, a wrong payload or a resurrected delete;
 *     append: rows that were never sent, or whose payload differs
 * @param unacknowledged append: sent rows whose ack never arrived; entity: keys whose last sent
 *     operation was never acknowledged (demanded all the same: the producers resend
 *     idempotently, so an unacknowledged batch may still be stored, once)
 * @param problems a few examples of failures, for a human
 */
record TableVerification(String table, String reader, long rowsRead, long expected, long verified,
    long missing, long duplicated, long wrong, long unacknowledged, List<String> problems) {

  boolean passed() {
    return missing == 0 && duplicated == 0 && wrong == 0 && verified == expected;
  }

  ObjectNode toJson() {
    ObjectNode node = Json.object();
    node.put("table", table);
    node.put("reader", reader);
    node.put("passed", passed());
    node.put("rows_read", rowsRead);
    node.put("expected", expected);
    node.put("verified", verified);
    node.put("missing", missing);
    node.put("duplicated", duplicated);
    node.put("wrong", wrong);
    node.put("unacknowledged", unacknowledged);
    problems.forEach(node.putArray("problems")::add);
    return node;
  }
}
