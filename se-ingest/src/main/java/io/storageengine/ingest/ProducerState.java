package io.storageengine.ingest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.wal.ProducerStamp;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Wire format of the {@value #ACTION} Flight action (ARCHITECTURE.md 6.1), shared by the server
 * and {@link io.storageengine.ingest.client.IngestClient#lastSequence}: the highest sequence of an
 * idempotent producer that is durable in a table, so that a producer numbering its batches by a
 * monotonic source position (a Kafka offset) can resume right after it.
 *
 * <p>Body: {@code {"catalog":"c","namespace":["a"],"table_name":"t","producer_id":"p"}} (unknown
 * fields are INVALID_ARGUMENT). One result: {@code {"last_sequence":n}}, or
 * {@code {"last_sequence":null}} for a producer with nothing durable in the table (never
 * written, or forgotten after the table's producer retention). Authorized like ingestion (the
 * caller must be a writer of the catalog).
 */
public final class ProducerState {
  /** The action type. */
  public static final String ACTION = "producer-state";

  private static final Set<String> FIELDS = Set.of("catalog", "namespace", "table_name", "producer_id");
  private static final String WHAT = "action " + ACTION;

  private ProducerState() {}

  /** What the action asks: one producer of one table. */
  public record Request(String catalog, List<String> namespace, String tableName, String producerId) {
    public Request {
      namespace = List.copyOf(namespace);
      ProducerStamp.checkProducerId(producerId, WHAT + ": field `producer_id`");
    }
  }

  /** Encodes the action body. */
  public static byte[] encodeRequest(Request request) {
    ObjectNode node = Json.object();
    node.put("catalog", request.catalog());
    ArrayNode ns = node.putArray("namespace");
    request.namespace().forEach(ns::add);
    node.put("table_name", request.tableName());
    node.put("producer_id", request.producerId());
    return Json.toBytes(node);
  }

  /** Parses the action body; every problem is INVALID_ARGUMENT naming the field. */
  public static Request parseRequest(byte[] body) {
    JsonNode node;
    try {
      node = Json.parse(body);
    } catch (SeException e) {
      throw SeException.invalid("%s: %s", WHAT, e.getMessage());
    }
    if (!node.isObject()) {
      throw SeException.invalid("%s: expected a JSON object", WHAT);
    }
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (!FIELDS.contains(name)) {
        throw SeException.invalid("%s: unknown field `%s`", WHAT, name);
      }
    }
    JsonNode ns = node.get("namespace");
    if (ns == null || !ns.isArray()) {
      throw SeException.invalid("%s: field `namespace` must be an array of strings", WHAT);
    }
    List<String> namespace = new ArrayList<>();
    for (JsonNode level : ns) {
      if (!level.isTextual() || level.asText().isEmpty()) {
        throw SeException.invalid("%s: field `namespace` must hold non-empty strings, got %s", WHAT, level);
      }
      namespace.add(level.asText());
    }
    return new Request(text(node, "catalog"), namespace, text(node, "table_name"), text(node, "producer_id"));
  }

  /** Encodes the result. */
  public static byte[] encodeResult(OptionalLong lastSequence) {
    ObjectNode node = Json.object();
    if (lastSequence.isPresent()) {
      node.put("last_sequence", lastSequence.getAsLong());
    } else {
      node.putNull("last_sequence");
    }
    return Json.toBytes(node);
  }

  /** Parses the result; INVALID_ARGUMENT when it is not one. */
  public static OptionalLong parseResult(byte[] body) {
    JsonNode node = Json.parse(body);
    JsonNode last = node.get("last_sequence");
    if (last == null || !(last.isNull() || last.canConvertToLong())) {
      throw SeException.invalid("%s: unexpected result %s", WHAT, node);
    }
    return last.isNull() ? OptionalLong.empty() : OptionalLong.of(last.asLong());
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null) {
      throw SeException.invalid("%s: missing field `%s`", WHAT, field);
    }
    if (!value.isTextual() || value.asText().isEmpty()) {
      throw SeException.invalid("%s: field `%s` must be a non-empty string", WHAT, field);
    }
    return value.asText();
  }
}
