package io.storageengine.cli;

import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.FlightCallHeaders;
import io.storageengine.ingest.client.BearerToken;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code se sql}: a Flight SQL client printing results as a table, CSV or JSON. */
@Command(name = "sql", mixinStandardHelpOptions = true,
    description = {"Run read-only SQL over a tenant's Iceberg tables through Arrow Flight SQL.",
        "The selected catalog is called `default`; namespaces are quoted dot-separated schemas:",
        "  SELECT * FROM default.\"analytics.events\".page_views LIMIT 10"})
final class SqlCommand implements Callable<Integer> {
  @Option(names = "--server-address", defaultValue = "http://127.0.0.1:7777", description = "Server (default ${DEFAULT-VALUE}).")
  String serverAddress;

  @CommandLine.Mixin
  TokenOption token;

  @CommandLine.Mixin
  TlsOption tls;

  @Option(names = "--catalog-id", required = true, description = "Tenant catalog to query.")
  String catalogId;

  @Option(names = "--format", defaultValue = "table", description = "table (default), csv or json (one object per line); dates, times and"
      + " timestamps print as ISO-8601 in all three")
  String format;

  @Option(names = "--null-string", paramLabel = "TEXT",
      description = "CSV only: the text of a NULL cell (default: an empty cell; an empty string is a quoted \"\").")
  String nullString;

  @Parameters(index = "0", paramLabel = "SQL")
  String sql;

  private FlightClient flightClient(BufferAllocator allocator) {
    Location location = IngestCommand.location(serverAddress);
    FlightClient.Builder builder = FlightClient.builder(allocator, location);
    tls.configure(builder, location);
    token.value().ifPresent(t -> builder.intercept(new BearerToken(t)));
    return builder.build();
  }

  @Override
  public Integer call() throws Exception {
    ResultPrinter printer = ResultPrinter.of(format.toLowerCase(Locale.ROOT), System.out, nullString);
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", Json.toString(Json.object().put("catalog_id", catalogId)));
    HeaderCallOption option = new HeaderCallOption(headers);
    try (BufferAllocator allocator = new RootAllocator();
        FlightClient client = flightClient(allocator);
        FlightSqlClient sqlClient = new FlightSqlClient(client)) {
      FlightInfo info = sqlClient.execute(sql, option);
      printer.begin(info.getSchemaOptional().orElse(null));
      for (FlightEndpoint endpoint : info.getEndpoints()) {
        try (FlightStream stream = sqlClient.getStream(endpoint.getTicket(), option)) {
          while (stream.next()) {
            printer.batch(stream.getRoot());
          }
        }
      }
      printer.end();
      return 0;
    } catch (FlightRuntimeException e) {
      String message = e.getMessage();
      if (message == null || message.isBlank()) {
        message = e.status().code().name();
      }
      if (TlsOption.tlsFailure(e).isPresent()) {
        message = TlsOption.handshakeFailure(serverAddress, TlsOption.tlsFailure(e).get());
      } else if (e.status().code() == org.apache.arrow.flight.FlightStatusCode.UNAVAILABLE) {
        message = "cannot reach the server at " + serverAddress + " (is `se dev` running?): " + message;
      }
      System.err.println("se: " + e.status().code() + ": " + message);
      return 1;
    }
  }
}
