package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.query.QueryLimits;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A query whose client gives up (its deadline passes: the client resets the call's stream)
 * stops on the server, through the real listener: the tenant's one query slot is free again
 * long before the server's own timeout (5 minutes) would free it. Before, the HTTP/2 server
 * never cancelled the call's gRPC context, and an abandoned query ran to its end.
 */
class AbandonedQueryTest {
  private static final String RUNAWAY_JOIN = "SELECT sum(x.range * y.range) FROM range(1000000) x, range(1000000) y";

  @TempDir Path dir;

  @Test
  void aQueryWhoseClientGaveUpStopsAndFreesItsSlot() throws Exception {
    ServerConfig config = ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(QueryLimits.TENANT_CONCURRENCY, "1")
        .with(QueryLimits.TENANT_QUEUE, "0");
    try (EngineServer server = EngineServer.start(config, Role.DEV);
        BufferAllocator allocator = new RootAllocator();
        FlightClient client = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.port()))
            .build();
        FlightSqlClient sql = new FlightSqlClient(client)) {
      CallHeaders headers = new FlightCallHeaders();
      headers.insert("se-query-metadata", "{\"catalog_id\":\"warehouse\"}");
      HeaderCallOption tenant = new HeaderCallOption(headers);
      assertThat(rows(sql, "SELECT 1", tenant)).isEqualTo(1);

      long started = System.nanoTime();
      assertThatThrownBy(() -> rows(sql, RUNAWAY_JOIN, tenant, CallOptions.timeout(1, TimeUnit.SECONDS)))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.TIMED_OUT));
      // The runaway held the tenant's only slot: the next query is refused until it stops.
      long freed = -1;
      while (System.nanoTime() - started < TimeUnit.SECONDS.toNanos(60)) {
        try {
          assertThat(rows(sql, "SELECT 1", tenant)).isEqualTo(1);
          freed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
          break;
        } catch (FlightRuntimeException e) {
          assertThat(e.status().code()).as(e.getMessage()).isEqualTo(FlightStatusCode.RESOURCE_EXHAUSTED);
          Thread.sleep(50);
        }
      }
      System.out.printf("abandoned query: the tenant's slot was free %d ms after the call began%n", freed);
      assertThat(freed).as("the abandoned query stopped").isBetween(0L, 10_000L);
    }
  }

  private static long rows(FlightSqlClient sql, String query, CallOption... options) throws Exception {
    long rows = 0;
    FlightInfo info = sql.execute(query, options);
    try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), options)) {
      while (stream.next()) {
        rows += stream.getRoot().getRowCount();
      }
    }
    return rows;
  }
}
