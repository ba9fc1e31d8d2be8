package io.storageengine.server.observability;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.WireFormat;
import io.opentelemetry.api.trace.Span;
import io.storageengine.common.Json;
import io.storageengine.common.telemetry.Metrics;
import io.storageengine.common.telemetry.SpanFields;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.impl.Flight;
import org.apache.arrow.flight.sql.impl.FlightSql;

/**
 * Reads the span fields of a Flight call out of its serialized request messages: the command
 * type, the kind of call, discovery filters, the length of a query (never its text), the
 * ingestion target and request ids. Unreadable input is ignored: the call itself reports it.
 */
final class FlightRequests {
  static final String NATIVE_INGEST_TYPE = "se.ingestion.v1.Ingest";
  private static final int FLIGHT_DATA_DESCRIPTOR = 1;
  private static final int FLIGHT_DATA_APP_METADATA = 3;

  private FlightRequests() {}

  /** What a request message says about the call. */
  static final class Facts {
    String kind = "other";
    String command;
    String catalogId;
    String table;
    String operation;
    Long requestId;
  }

  /** A FlightDescriptor (GetFlightInfo, GetSchema, PollFlightInfo). */
  static Facts descriptor(byte[] message, Span span) {
    Facts facts = new Facts();
    try {
      Flight.FlightDescriptor descriptor = Flight.FlightDescriptor.parseFrom(message);
      if (descriptor.getType() == Flight.FlightDescriptor.DescriptorType.CMD) {
        command(descriptor.getCmd(), facts, span, true);
      }
    } catch (InvalidProtocolBufferException e) {
      // Flight answers the malformed request; the span keeps the method only.
    }
    return facts;
  }

  /**
   * A Ticket (DoGet). Only the command type is read: the ticket's content (statement handles,
   * filters) is not a span field.
   */
  static Facts ticket(byte[] message) {
    Facts facts = new Facts();
    try {
      command(Flight.Ticket.parseFrom(message).getTicket(), facts, Span.getInvalid(), false);
    } catch (InvalidProtocolBufferException e) {
      // see descriptor()
    }
    return facts;
  }

  /** An Action (DoAction): its type, and the length of a statement being prepared. */
  static Facts action(byte[] message, Span span) {
    Facts facts = new Facts();
    facts.kind = "action";
    try {
      Flight.Action action = Flight.Action.parseFrom(message);
      facts.command = action.getType();
      if (action.getType().equals("CreatePreparedStatement")) {
        Any any = Any.parseFrom(action.getBody());
        if (any.is(FlightSql.ActionCreatePreparedStatementRequest.class)) {
          span.setAttribute(SpanFields.QUERY_LENGTH, (long) any.unpack(
              FlightSql.ActionCreatePreparedStatementRequest.class).getQuery().length());
          facts.kind = "query";
        }
      } else if (action.getType().equals("SetSessionOptions")) {
        Flight.SessionOptionValue catalog = Flight.SetSessionOptionsRequest.parseFrom(action.getBody())
            .getSessionOptionsMap().get("catalog");
        if (catalog != null && catalog.hasStringValue()) {
          facts.catalogId = catalog.getStringValue();
        }
      }
    } catch (InvalidProtocolBufferException e) {
      // see descriptor()
    }
    return facts;
  }

  /**
   * One FlightData message of a DoPut. The first carries the descriptor (what is written where)
   * and, for native ingestion, the target in its app_metadata; later ones carry request ids. The
   * Arrow body is skipped without being copied.
   */
  static Facts flightData(byte[] message, boolean first, Span span) {
    Facts facts = new Facts();
    ByteString descriptor = null;
    ByteString appMetadata = null;
    try {
      CodedInputStream in = CodedInputStream.newInstance(message);
      for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
        int field = WireFormat.getTagFieldNumber(tag);
        if (field == FLIGHT_DATA_DESCRIPTOR && first) {
          descriptor = in.readBytes();
        } else if (field == FLIGHT_DATA_APP_METADATA) {
          appMetadata = in.readBytes();
        } else if (!in.skipField(tag)) {
          break;
        }
      }
    } catch (IOException e) {
      return facts;
    }
    if (descriptor != null) {
      try {
        Flight.FlightDescriptor d = Flight.FlightDescriptor.parseFrom(descriptor);
        if (d.getType() == Flight.FlightDescriptor.DescriptorType.CMD) {
          command(d.getCmd(), facts, span, true);
        }
      } catch (InvalidProtocolBufferException e) {
        // see descriptor()
      }
    }
    if (appMetadata != null && !appMetadata.isEmpty()) {
      ingestMetadata(appMetadata.toByteArray(), facts);
    }
    return facts;
  }

  /** The native protocol's app_metadata JSON: request id, and on the first message the target. */
  private static void ingestMetadata(byte[] json, Facts facts) {
    JsonNode node;
    try {
      node = Json.parse(json);
    } catch (RuntimeException e) {
      return;
    }
    if (!node.isObject()) {
      return;
    }
    if (node.path("request_id").canConvertToLong()) {
      facts.requestId = node.get("request_id").asLong();
    }
    if (node.path("catalog").isTextual()) {
      facts.catalogId = node.get("catalog").asText();
    }
    if (node.path("table_name").isTextual()) {
      List<String> namespace = new ArrayList<>();
      node.path("namespace").forEach(level -> namespace.add(level.asText()));
      facts.table = Metrics.tableLabel(namespace, node.get("table_name").asText());
    }
    if (node.path("operation").isTextual()) {
      facts.operation = node.get("operation").asText();
    }
  }

  /** The selected catalog from the {@code se-query-metadata} header; null when absent or unreadable. */
  static String headerCatalog(String header) {
    if (header == null || header.isBlank()) {
      return null;
    }
    try {
      JsonNode id = Json.parse(header.getBytes(StandardCharsets.UTF_8)).path("catalog_id");
      return id.isTextual() ? id.asText() : null;
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static void command(ByteString bytes, Facts facts, Span span, boolean withFields) {
    Any any;
    try {
      any = Any.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      return;
    }
    String typeUrl = any.getTypeUrl();
    String type = typeUrl.substring(typeUrl.lastIndexOf('/') + 1);
    facts.command = type.substring(type.lastIndexOf('.') + 1);
    if (type.equals(NATIVE_INGEST_TYPE)) {
      facts.kind = "ingest";
      return;
    }
    facts.kind = switch (facts.command) {
      case "CommandStatementQuery", "CommandPreparedStatementQuery", "CommandStatementSubstraitPlan",
          "TicketStatementQuery" -> "query";
      case "CommandStatementIngest" -> "bulk_ingest";
      case "CommandStatementUpdate", "CommandPreparedStatementUpdate" -> "update";
      default -> facts.command.startsWith("CommandGet") ? "metadata" : "other";
    };
    if (!withFields) {
      return;
    }
    try {
      switch (facts.command) {
        case "CommandStatementQuery" -> span.setAttribute(SpanFields.QUERY_LENGTH,
            (long) any.unpack(FlightSql.CommandStatementQuery.class).getQuery().length());
        case "CommandStatementUpdate" -> span.setAttribute(SpanFields.QUERY_LENGTH,
            (long) any.unpack(FlightSql.CommandStatementUpdate.class).getQuery().length());
        case "CommandStatementIngest" -> {
          FlightSql.CommandStatementIngest ingest = any.unpack(FlightSql.CommandStatementIngest.class);
          if (ingest.hasCatalog()) {
            facts.catalogId = ingest.getCatalog();
          }
          facts.table = ingest.hasSchema() && !ingest.getSchema().isEmpty()
              ? ingest.getSchema() + "." + ingest.getTable() : ingest.getTable();
          facts.operation = ingest.getOptionsOrDefault("se.operation", "upsert");
        }
        case "CommandGetTables" -> {
          FlightSql.CommandGetTables c = any.unpack(FlightSql.CommandGetTables.class);
          filter(span, c.hasCatalog(), SpanFields.FILTER_CATALOG, c.getCatalog());
          filter(span, c.hasDbSchemaFilterPattern(), SpanFields.FILTER_SCHEMA, c.getDbSchemaFilterPattern());
          filter(span, c.hasTableNameFilterPattern(), SpanFields.FILTER_TABLE, c.getTableNameFilterPattern());
          if (c.getTableTypesCount() > 0) {
            span.setAttribute(SpanFields.FILTER_TABLE_TYPES, List.copyOf(c.getTableTypesList()));
          }
        }
        case "CommandGetDbSchemas" -> {
          FlightSql.CommandGetDbSchemas c = any.unpack(FlightSql.CommandGetDbSchemas.class);
          filter(span, c.hasCatalog(), SpanFields.FILTER_CATALOG, c.getCatalog());
          filter(span, c.hasDbSchemaFilterPattern(), SpanFields.FILTER_SCHEMA, c.getDbSchemaFilterPattern());
        }
        case "CommandGetPrimaryKeys" -> {
          FlightSql.CommandGetPrimaryKeys c = any.unpack(FlightSql.CommandGetPrimaryKeys.class);
          filter(span, c.hasCatalog(), SpanFields.FILTER_CATALOG, c.getCatalog());
          filter(span, c.hasDbSchema(), SpanFields.FILTER_SCHEMA, c.getDbSchema());
          filter(span, true, SpanFields.FILTER_TABLE, c.getTable());
        }
        default -> { }
      }
    } catch (InvalidProtocolBufferException e) {
      // see descriptor()
    }
  }

  private static void filter(Span span, boolean present,
      io.opentelemetry.api.common.AttributeKey<String> key, String value) {
    if (present) {
      span.setAttribute(key, value);
    }
  }
}
