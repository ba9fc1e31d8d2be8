package io.storageengine.server.lb;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.storageengine.common.Json;
import io.storageengine.ingest.IngestProtocol;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.flight.impl.Flight;
import org.apache.arrow.flight.sql.impl.FlightSql;

/**
 * The table an ingestion stream writes, read from its first messages, as the key the load
 * balancer hashes: {@code <catalog>/<namespace.dotted>/<table>}. The native protocol carries
 * it in the header JSON (in the schema message's {@code app_metadata}, or in the metadata-only
 * message right after it, which is where Arrow Java clients put it); Flight SQL bulk ingest
 * carries it in the {@code CommandStatementIngest} of the descriptor. Both spell the same table
 * the same way, so a table's native and bulk writes meet on one server.
 *
 * <p>The load balancer only routes: it does not validate. A stream whose key cannot be read is
 * routed by its fallback key, and the server it reaches rejects it with the precise error.
 */
final class RoutingKey {
  /** The first messages decide; a stream that has not named its table by then is not ingestion. */
  static final int MAX_MESSAGES = 2;

  private RoutingKey() {}

  /**
   * The key of a {@code DoPut} stream from its first {@code messages}; empty when more
   * messages are needed (and fewer than {@link #MAX_MESSAGES} arrived) or when the stream is
   * not an ingestion of a named table.
   */
  static Optional<String> ofDoPut(List<byte[]> messages) {
    if (messages.isEmpty()) {
      return Optional.empty();
    }
    try {
      Flight.FlightData first = Flight.FlightData.parseFrom(messages.get(0));
      Flight.FlightDescriptor descriptor = first.getFlightDescriptor();
      if (descriptor.getType() == Flight.FlightDescriptor.DescriptorType.PATH) {
        return Optional.of("path/" + String.join("/", descriptor.getPathList()));
      }
      Any command = Any.parseFrom(descriptor.getCmd());
      if (IngestProtocol.TYPE_URL.equals(command.getTypeUrl())) {
        if (!first.getAppMetadata().isEmpty()) {
          return nativeHeader(first.getAppMetadata());
        }
        if (messages.size() < 2) {
          return Optional.empty();
        }
        return nativeHeader(Flight.FlightData.parseFrom(messages.get(1)).getAppMetadata());
      }
      if (command.is(FlightSql.CommandStatementIngest.class)) {
        FlightSql.CommandStatementIngest ingest = command.unpack(FlightSql.CommandStatementIngest.class);
        return Optional.of(key(ingest.getCatalog(), List.of(ingest.getSchema()), ingest.getTable()));
      }
      return Optional.empty();
    } catch (InvalidProtocolBufferException e) {
      return Optional.empty();
    }
  }

  private static Optional<String> nativeHeader(ByteString metadata) {
    try {
      JsonNode header = Json.MAPPER.readTree(metadata.toByteArray());
      if (header == null || !header.isObject()) {
        return Optional.empty();
      }
      List<String> namespace = new ArrayList<>();
      header.path("namespace").forEach(level -> namespace.add(level.asText()));
      return Optional.of(key(header.path("catalog").asText(), namespace, header.path("table_name").asText()));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  static String key(String catalog, List<String> namespace, String table) {
    return catalog + "/" + String.join(".", namespace) + "/" + table;
  }
}
