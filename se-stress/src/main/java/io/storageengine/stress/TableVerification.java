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
 * @param expected append: acknowledged rows; entity: keys the model knows
 * @param verified append: acknowledged rows present exactly once; entity: keys whose row (or
 *     absence) is an outcome the model allows
 * @param missing append: acknowledged rows absent; entity: keys whose acknowledged row is absent
 *     although no later delete could explain it
 * @param duplicated rows present more than once (append: by row id; entity: by key)
 * @param wrong entity: keys showing a stale version, a wrong payload or a resurrected delete;
 *     append: rows that were never sent, or whose payload differs
 * @param unknownPresent rows of batches whose ack never arrived that are present (allowed once)
 * @param problems a few examples of failures, for a human
 */
record TableVerification(String table, String reader, long rowsRead, long expected, long verified,
    long missing, long duplicated, long wrong, long unknownPresent, List<String> problems) {

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
    node.put("unknown_present", unknownPresent);
    problems.forEach(node.putArray("problems")::add);
    return node;
  }
}
