package io.storageengine.kafka.connect;

import io.storageengine.common.SeException;
import io.storageengine.common.tls.ClientTrust;
import io.storageengine.ingest.client.BearerToken;
import io.storageengine.ingest.client.IngestClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.util.TableRef;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.ByteArrayReadableSeekableByteChannel;

/**
 * One Flight connection of a task to the engine (TLS and token from the config): the ingest
 * client for writes and Flight SQL metadata calls that describe target tables.
 */
final class EngineConnection implements AutoCloseable {
  private final FlightClient flight;
  private final IngestClient ingest;
  private final FlightSqlClient sql;
  private final HeaderCallOption tenant;

  private EngineConnection(FlightClient flight, BufferAllocator allocator, String catalog) {
    this.flight = flight;
    this.ingest = new IngestClient(flight, allocator);
    this.sql = new FlightSqlClient(flight);
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"" + catalog.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}");
    this.tenant = new HeaderCallOption(headers);
  }

  static EngineConnection open(EngineSinkConfig config, BufferAllocator allocator) {
    URI uri = config.uri();
    boolean tls = "grpc+tls".equals(uri.getScheme());
    Location location = tls ? Location.forGrpcTls(uri.getHost(), uri.getPort())
        : Location.forGrpcInsecure(uri.getHost(), uri.getPort());
    FlightClient.Builder builder = FlightClient.builder(allocator, location);
    config.token().ifPresent(token -> builder.intercept(new BearerToken(token)));
    if (tls && config.caBundle().isPresent()) {
      ClientTrust.of(EngineSinkConfig.CA_BUNDLE, config.caBundle().get());
      try (InputStream pem = Files.newInputStream(config.caBundle().get())) {
        builder.useTls().trustedCertificates(pem);
        return new EngineConnection(builder.build(), allocator, config.catalog());
      } catch (IOException e) {
        throw SeException.invalid("%s %s: cannot read the file (%s)", EngineSinkConfig.CA_BUNDLE,
            config.caBundle().get(), e.getClass().getSimpleName());
      }
    }
    return new EngineConnection(builder.build(), allocator, config.catalog());
  }

  IngestClient ingest() {
    return ingest;
  }

  /** Describes {@code name} from the engine's Flight SQL catalog metadata; NOT_FOUND if absent. */
  EngineTable describe(EngineSinkConfig.TableName name, EngineSinkConfig config) {
    String namespace = String.join(".", name.namespace());
    Schema schema = null;
    FlightInfo tables = sql.getTables(null, namespace, name.name(), null, true, tenant);
    for (FlightEndpoint endpoint : tables.getEndpoints()) {
      try (FlightStream stream = sql.getStream(endpoint.getTicket(), tenant)) {
        while (stream.next()) {
          VarCharVector schemas = (VarCharVector) stream.getRoot().getVector("db_schema_name");
          VarCharVector names = (VarCharVector) stream.getRoot().getVector("table_name");
          VarBinaryVector bytes = (VarBinaryVector) stream.getRoot().getVector("table_schema");
          for (int row = 0; row < stream.getRoot().getRowCount(); row++) {
            // The filters are LIKE patterns: '_' in a name matches any character.
            if (namespace.equals(schemas.getObject(row).toString()) && name.name().equals(names.getObject(row).toString())) {
              schema = deserialize(bytes.get(row));
            }
          }
        }
      } catch (Exception e) {
        throw e instanceof RuntimeException r ? r : SeException.unavailable("reading the table list", e);
      }
    }
    if (schema == null) {
      throw SeException.notFound("table %s.%s does not exist", config.catalog(), name);
    }
    List<String> key = new ArrayList<>();
    FlightInfo keys = sql.getPrimaryKeys(TableRef.of(null, namespace, name.name()), tenant);
    for (FlightEndpoint endpoint : keys.getEndpoints()) {
      try (FlightStream stream = sql.getStream(endpoint.getTicket(), tenant)) {
        while (stream.next()) {
          VarCharVector columns = (VarCharVector) stream.getRoot().getVector("column_name");
          for (int row = 0; row < stream.getRoot().getRowCount(); row++) {
            key.add(columns.getObject(row).toString());
          }
        }
      } catch (Exception e) {
        throw e instanceof RuntimeException r ? r : SeException.unavailable("reading the primary key", e);
      }
    }
    return EngineTable.of(name, schema, key, config.versionColumn());
  }

  private static Schema deserialize(byte[] bytes) {
    try {
      return MessageSerializer.deserializeSchema(new ReadChannel(new ByteArrayReadableSeekableByteChannel(bytes)));
    } catch (IOException e) {
      throw SeException.internal("the engine sent an unreadable table schema", e);
    }
  }

  @Override
  public void close() throws InterruptedException {
    flight.close();
  }
}
