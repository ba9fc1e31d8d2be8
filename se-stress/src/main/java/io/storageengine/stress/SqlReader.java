package io.storageengine.stress;

import io.storageengine.common.Json;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Flight SQL queries against one tenant, selected with the {@code se-query-metadata} header.
 * Thread-safe.
 */
final class SqlReader implements AutoCloseable {
  private final BufferAllocator allocator;
  private final ServerEndpoint endpoint;
  private FlightSqlClient sql;
  private final HeaderCallOption tenant;
  private final CallOption deadline;

  /** Every call of this reader fails with DEADLINE_EXCEEDED ({@code TIMED_OUT}) after {@code timeout}. */
  SqlReader(BufferAllocator allocator, ServerEndpoint endpoint, String catalogId, Duration timeout) {
    this.allocator = allocator;
    this.endpoint = endpoint;
    FlightCallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", Json.toString(Json.object().put("catalog_id", catalogId)));
    this.tenant = new HeaderCallOption(headers);
    this.deadline = CallOptions.timeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** {@code default."a.b".t}: how SQL names a table of the selected tenant. */
  static String sqlName(TableIdentifier table) {
    return "default.\"" + String.join(".", table.namespace().levels()).replace("\"", "\"\"")
        + "\".\"" + table.name().replace("\"", "\"\"") + "\"";
  }

  /**
   * Runs {@code query} and hands every result batch to {@code batches}. After UNAVAILABLE the
   * connection is replaced for the next call: a gRPC channel that saw the server die may wait in
   * its reconnect backoff long after the server is back.
   */
  void query(String query, Consumer<VectorSchemaRoot> batches) throws Exception {
    FlightSqlClient client = client();
    try {
      FlightInfo info = client.execute(query, tenant, deadline);
      for (FlightEndpoint endpoint : info.getEndpoints()) {
        try (FlightStream stream = client.getStream(endpoint.getTicket(), tenant, deadline)) {
          while (stream.next()) {
            batches.accept(stream.getRoot());
          }
        }
      }
    } catch (FlightRuntimeException e) {
      if (e.status().code() == FlightStatusCode.UNAVAILABLE) {
        reset(client);
      }
      throw e;
    }
  }

  private synchronized FlightSqlClient client() {
    if (sql == null) {
      sql = new FlightSqlClient(endpoint.flightClient(allocator));
    }
    return sql;
  }

  private synchronized void reset(FlightSqlClient broken) throws Exception {
    if (sql == broken) {
      sql = null;
      broken.close();
    }
  }

  /** The first column of the first row as a long; null when there is no row or it is null. */
  Long queryLong(String query) throws Exception {
    Long[] result = new Long[1];
    boolean[] seen = new boolean[1];
    query(query, root -> {
      if (!seen[0] && root.getRowCount() > 0) {
        seen[0] = true;
        FieldVector v = root.getVector(0);
        result[0] = v.isNull(0) ? null : ((Number) v.getObject(0)).longValue();
      }
    });
    return result[0];
  }

  /** Every row of {@code columns} of {@code table}. */
  void readTable(TableIdentifier table, List<String> columns, Consumer<VectorSchemaRoot> batches)
      throws Exception {
    query("SELECT " + String.join(", ", columns) + " FROM " + sqlName(table), batches);
  }

  @Override
  public synchronized void close() throws Exception {
    if (sql != null) {
      sql.close(); // closes the Flight client too
      sql = null;
    }
  }

}
