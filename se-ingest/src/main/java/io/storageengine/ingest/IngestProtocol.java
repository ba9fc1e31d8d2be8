package io.storageengine.ingest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.wal.ProducerStamp;
import io.storageengine.wal.WalOperation;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.memory.ArrowBuf;

/**
 * Wire format of the native DoPut ingestion protocol (ARCHITECTURE.md 6.1), shared by the
 * server side and {@link io.storageengine.ingest.client.IngestClient}.
 *
 * <ul>
 *   <li>Descriptor: a CMD holding a protobuf {@code Any} with type URL {@link #TYPE_URL} and an
 *       empty value.</li>
 *   <li>Stream header ({@link Header}): JSON app_metadata
 *       {@code {"request_id":0,"catalog":"c","namespace":["a"],"table_name":"t"}} with optional
 *       {@code "operation":"upsert"|"delete"} and {@code "producer_id":"p"} (an idempotent stream,
 *       see {@link ProducerStamp#checkProducerId} for the form). Arrow Java drops app_metadata attached to the
 *       schema message, so the header travels as the first metadata-only message of the stream
 *       (right after the schema, before any batch).</li>
 *   <li>Every record batch: app_metadata {@code {"request_id":n}}, n &gt; 0 and unique in the
 *       stream, plus {@code "sequence":s} (s &ge; 0) on every batch of a stream with a producer id
 *       and on none of another. Every ack ({@code PutResult}) carries {@code {"request_id":n}};
 *       0 acknowledges the header. A batch whose (producer id, sequence) is already durable is
 *       not written again and acknowledged with {@code {"request_id":n,"duplicate":true}}.</li>
 * </ul>
 */
public final class IngestProtocol {
  /** Type URL of the {@code Any} in the descriptor of a native ingest DoPut. */
  public static final String TYPE_URL = "type.googleapis.com/se.ingestion.v1.Ingest";

  private static final Set<String> HEADER_FIELDS =
      Set.of("request_id", "catalog", "namespace", "table_name", "operation", "producer_id");
  private static final Set<String> BATCH_FIELDS = Set.of("request_id", "sequence");

  private IngestProtocol() {}

  /**
   * The stream header: target table and operation, and the producer id of an idempotent stream
   * (null: a plain one).
   */
  public record Header(String catalog, List<String> namespace, String tableName,
      WalOperation operation, String producerId) {
    public Header {
      namespace = List.copyOf(namespace);
      if (producerId != null) {
        ProducerStamp.checkProducerId(producerId, "stream header: field `producer_id`");
      }
    }

    /** The header of a plain (not idempotent) stream. */
    public Header(String catalog, List<String> namespace, String tableName,
        WalOperation operation) {
      this(catalog, namespace, tableName, operation, null);
    }

    /** This header with {@code producerId}. */
    public Header withProducerId(String producerId) {
      return new Header(catalog, namespace, tableName, operation, producerId);
    }
  }

  /** A batch's app_metadata: its request id, and its sequence (null: none). */
  public record BatchMetadata(long requestId, Long sequence) {}

  /** The descriptor a client sends to start a native ingest stream. */
  public static FlightDescriptor descriptor() {
    return FlightDescriptor.command(Any.newBuilder().setTypeUrl(TYPE_URL)
        .setValue(ByteString.EMPTY).build().toByteArray());
  }

  /** True when {@code descriptor} is a CMD holding an {@code Any} of {@link #TYPE_URL}. */
  public static boolean isNativeIngest(FlightDescriptor descriptor) {
    if (descriptor == null || !descriptor.isCommand()) {
      return false;
    }
    try {
      return TYPE_URL.equals(Any.parseFrom(descriptor.getCommand()).getTypeUrl());
    } catch (InvalidProtocolBufferException e) {
      return false;
    }
  }

  /** Encodes a header as app_metadata JSON. */
  public static byte[] encodeHeader(Header header) {
    ObjectNode node = Json.object();
    node.put("request_id", 0);
    node.put("catalog", header.catalog());
    ArrayNode ns = node.putArray("namespace");
    header.namespace().forEach(ns::add);
    node.put("table_name", header.tableName());
    node.put("operation", header.operation().name().toLowerCase(Locale.ROOT));
    if (header.producerId() != null) {
      node.put("producer_id", header.producerId());
    }
    return Json.toBytes(node);
  }

  /** Encodes {@code {"request_id":n,"sequence":s}} (s null: without a sequence). */
  public static byte[] encodeBatch(long requestId, Long sequence) {
    if (sequence == null) {
      return encodeRequestId(requestId);
    }
    return ("{\"request_id\":" + requestId + ",\"sequence\":" + sequence + "}")
        .getBytes(StandardCharsets.UTF_8);
  }

  /** Encodes the ack of a duplicate: {@code {"request_id":n,"duplicate":true}}. */
  public static byte[] encodeDuplicateAck(long requestId) {
    return ("{\"request_id\":" + requestId + ",\"duplicate\":true}")
        .getBytes(StandardCharsets.UTF_8);
  }

  /** True for the ack of a batch that was already durable ({@code "duplicate":true}). */
  public static boolean isDuplicateAck(byte[] metadata) {
    return Json.parse(metadata).path("duplicate").asBoolean(false);
  }

  /** Encodes {@code {"request_id":n}}. */
  public static byte[] encodeRequestId(long requestId) {
    return ("{\"request_id\":" + requestId + "}").getBytes(StandardCharsets.UTF_8);
  }

  /** Parses and checks a stream header; every problem is INVALID_ARGUMENT naming the field. */
  public static Header parseHeader(ArrowBuf metadata) {
    return parseHeader(metadata == null ? null : bytes(metadata));
  }

  /** As {@link #parseHeader(ArrowBuf)}, from the app_metadata bytes (null: none). */
  public static Header parseHeader(byte[] metadata) {
    if (metadata == null) {
      throw SeException.invalid("stream header: the first message after the schema must carry "
          + "app_metadata {\"request_id\":0,\"catalog\":...,\"namespace\":[...],\"table_name\":...}");
    }
    JsonNode node = parseObject(metadata, "stream header");
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (!HEADER_FIELDS.contains(name)) {
        throw SeException.invalid("stream header: unknown field `%s`", name);
      }
    }
    long requestId = requestIdOf(node, "stream header");
    if (requestId != 0) {
      throw SeException.invalid("stream header: field `request_id` must be 0, got %d", requestId);
    }
    String catalog = text(node, "catalog");
    JsonNode ns = node.get("namespace");
    if (ns == null || !ns.isArray()) {
      throw SeException.invalid("stream header: field `namespace` must be an array of strings");
    }
    List<String> namespace = new ArrayList<>();
    for (JsonNode level : ns) {
      if (!level.isTextual() || level.asText().isEmpty()) {
        throw SeException.invalid(
            "stream header: field `namespace` must hold non-empty strings, got %s", level);
      }
      namespace.add(level.asText());
    }
    String table = text(node, "table_name");
    WalOperation operation = WalOperation.UPSERT;
    JsonNode op = node.get("operation");
    if (op != null) {
      operation = parseOperation(op.isTextual() ? op.asText() : op.toString(),
          "stream header: field `operation`");
    }
    String producerId = null;
    JsonNode producer = node.get("producer_id");
    if (producer != null) {
      if (!producer.isTextual()) {
        throw SeException.invalid("stream header: field `producer_id` must be a string, got %s",
            producer);
      }
      producerId = producer.asText();
    }
    return new Header(catalog, namespace, table, operation, producerId);
  }

  /** Parses a batch's {@code {"request_id":n}} and checks n &gt; 0. */
  public static long parseBatchRequestId(ArrowBuf metadata) {
    return parseBatchRequestId(metadata == null ? null : bytes(metadata));
  }

  /**
   * As {@link #parseBatchRequestId(ArrowBuf)}, from the app_metadata bytes (null: none); a
   * {@code sequence} is refused (streams without a producer id carry none).
   */
  public static long parseBatchRequestId(byte[] metadata) {
    BatchMetadata batch = parseBatch(metadata);
    if (batch.sequence() != null) {
      throw SeException.invalid("batch app_metadata: field `sequence` needs a stream with a "
          + "producer id (header field `producer_id`)");
    }
    return batch.requestId();
  }

  /**
   * Parses a batch's {@code {"request_id":n}} with an optional {@code "sequence":s}; checks
   * n &gt; 0 and s &ge; 0, INVALID_ARGUMENT naming the field.
   */
  public static BatchMetadata parseBatch(byte[] metadata) {
    if (metadata == null) {
      throw SeException.invalid("record batch without app_metadata: expected {\"request_id\":n}");
    }
    JsonNode node = parseObject(metadata, "batch app_metadata");
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (!BATCH_FIELDS.contains(name)) {
        throw SeException.invalid("batch app_metadata: unknown field `%s`", name);
      }
    }
    long id = requestIdOf(node, "batch app_metadata");
    if (id <= 0) {
      throw SeException.invalid(
          "batch app_metadata: field `request_id` must be > 0 (0 is the header), got %d", id);
    }
    Long sequence = null;
    JsonNode seq = node.get("sequence");
    if (seq != null) {
      if (!seq.isIntegralNumber() || !seq.canConvertToLong()) {
        throw SeException.invalid(
            "batch app_metadata: field `sequence` must be an integer, got %s", seq);
      }
      if (seq.asLong() < 0) {
        throw SeException.invalid(
            "batch app_metadata: field `sequence` must be >= 0, got %d", seq.asLong());
      }
      sequence = seq.asLong();
    }
    return new BatchMetadata(id, sequence);
  }

  /** Parses an ack's {@code {"request_id":n}}. */
  public static long parseAck(byte[] metadata) {
    return requestIdOf(Json.parse(metadata), "ack");
  }

  /** {@code upsert} or {@code delete}, case-insensitive. */
  public static WalOperation parseOperation(String value, String what) {
    return switch (value.toLowerCase(Locale.ROOT)) {
      case "upsert" -> WalOperation.UPSERT;
      case "delete" -> WalOperation.DELETE;
      default -> throw SeException.invalid(
          "%s must be \"upsert\" or \"delete\", got %s", what, value);
    };
  }

  private static byte[] bytes(ArrowBuf metadata) {
    byte[] bytes = new byte[(int) metadata.readableBytes()];
    metadata.getBytes(metadata.readerIndex(), bytes);
    return bytes;
  }

  private static JsonNode parseObject(byte[] bytes, String what) {
    JsonNode node;
    try {
      node = Json.parse(bytes);
    } catch (SeException e) {
      throw SeException.invalid("%s: %s", what, e.getMessage());
    }
    if (!node.isObject()) {
      throw SeException.invalid("%s: expected a JSON object", what);
    }
    return node;
  }

  private static long requestIdOf(JsonNode node, String what) {
    JsonNode id = node.get("request_id");
    if (id == null) {
      throw SeException.invalid("%s: missing field `request_id`", what);
    }
    if (!id.isIntegralNumber() || !id.canConvertToLong()) {
      throw SeException.invalid("%s: field `request_id` must be an integer, got %s", what, id);
    }
    return id.asLong();
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null) {
      throw SeException.invalid("stream header: missing field `%s`", field);
    }
    if (!value.isTextual() || value.asText().isEmpty()) {
      throw SeException.invalid("stream header: field `%s` must be a non-empty string", field);
    }
    return value.asText();
  }
}
