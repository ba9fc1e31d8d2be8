package io.storageengine.stress;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code se-stress}: drives a running server over Arrow Flight with configurable producers,
 * prints live progress on stderr, verifies what was acknowledged through Flight SQL and Iceberg's
 * reader, and prints one JSON summary on stdout. Exit code 0 when verification passed (or was
 * skipped), 1 when it failed, 2 for bad options.
 */
@Command(name = "se-stress", mixinStandardHelpOptions = true,
    description = {"Load generator for Storage Engine: writes through the native Flight ingestion",
        "protocol, then verifies every acknowledged row through Flight SQL and Iceberg's reader."})
public final class StressMain implements Callable<Integer> {
  @Option(names = "--server-address", defaultValue = "127.0.0.1:7777", description = "Server host:port (default ${DEFAULT-VALUE}).")
  String serverAddress;

  @Option(names = "--token", defaultValue = "${env:SE_TOKEN}", showDefaultValue = CommandLine.Help.Visibility.NEVER,
      description = "Token sent as Authorization: Bearer (default: the SE_TOKEN variable); servers in --auth.mode none need none.")
  String token;

  @Option(names = "--catalog-id", defaultValue = "warehouse", description = "Tenant catalog (default ${DEFAULT-VALUE}).")
  String catalogId;

  @Option(names = "--namespace", defaultValue = "stress", description = "Namespace of the tables (default ${DEFAULT-VALUE}).")
  String namespace;

  @Option(names = "--table-prefix", defaultValue = "stress", description = "Tables are <prefix>_<mode>_<i> (default ${DEFAULT-VALUE}).")
  String tablePrefix;

  @Option(names = "--tables", defaultValue = "1", description = "Number of tables (default ${DEFAULT-VALUE}).")
  int tables;

  @Option(names = "--mode", defaultValue = "append", description = "append or entity (default ${DEFAULT-VALUE}).")
  String mode;

  @Option(names = "--row-bytes", defaultValue = "100", description = "Payload bytes per row (default ${DEFAULT-VALUE}).")
  int rowBytes;

  @Option(names = "--key-space", defaultValue = "100000", description = "Entity: distinct keys (default ${DEFAULT-VALUE}).")
  long keySpace;

  @Option(names = "--update-ratio", description = "Entity: share of upserts that update an existing key (default 0.5).")
  Double updateRatio;

  @Option(names = "--delete-ratio", description = "Entity: share of operations that are deletes (default 0.05).")
  Double deleteRatio;

  @Option(names = "--concurrency", defaultValue = "2", description = "Producers per table (default ${DEFAULT-VALUE}).")
  int concurrency;

  @Option(names = "--rate", defaultValue = "0", description = "Total rows per second; 0 = as fast as possible (default ${DEFAULT-VALUE}).")
  long rate;

  @Option(names = "--batch-rows", defaultValue = "1000", description = "Rows per batch (default ${DEFAULT-VALUE}).")
  int batchRows;

  @Option(names = "--window", defaultValue = "8", description = "Unacknowledged batches per producer (default ${DEFAULT-VALUE}).")
  int window;

  @Option(names = "--duration", defaultValue = "30s", converter = DurationConverter.class, description = "How long to write (default ${DEFAULT-VALUE}).")
  Duration duration;

  @Option(names = "--verify", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Verify through Flight SQL and Iceberg's reader after writing (default on; --no-verify skips).")
  boolean verify;

  @Option(names = "--settle", defaultValue = "3s", converter = DurationConverter.class, description = "Verification: tables must be unchanged this long first (default ${DEFAULT-VALUE}).")
  Duration settle;

  @Option(names = "--verify-timeout", defaultValue = "120s", converter = DurationConverter.class, description = "Verification: give up after (default ${DEFAULT-VALUE}).")
  Duration verifyTimeout;

  @Option(names = "--create-tables", description = "Create the tables if they do not exist.")
  boolean createTables;

  @Option(names = "--seed", defaultValue = "1", description = "Seed of the producers' random choices (default ${DEFAULT-VALUE}).")
  long seed;

  @Option(names = "--json", paramLabel = "FILE", description = "Also write the JSON summary to FILE.")
  Path json;

  @Option(names = "--probe", defaultValue = "max", description = "Freshness probe: max (SELECT max(version column) of"
      + " the table until it reaches the batch's) or point (entity: SELECT max(version) WHERE key = the last acknowledged"
      + " batch's first key, until it shows that batch's version) (default ${DEFAULT-VALUE}).")
  String probe;

  @Option(names = "--quiet", description = "No live progress on stderr.")
  boolean quiet;

  public static void main(String[] args) {
    System.exit(execute(System.out, System.err, args));
  }

  /** Runs the command line; the summary goes to {@code out}, progress and errors to {@code err}. */
  static int execute(PrintStream out, PrintStream err, String... args) {
    StressMain main = new StressMain();
    main.out = out;
    main.err = err;
    CommandLine cli = new CommandLine(main);
    cli.setErr(new java.io.PrintWriter(err, true));
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      err.println("se-stress: " + (e instanceof SeException ? e.getMessage() : e.toString()));
      return e instanceof SeException se && (se.code().category() == ErrorCode.Category.USER
          || se.code().category() == ErrorCode.Category.NOT_FOUND) ? 2 : 1;
    });
    return cli.execute(args);
  }

  private PrintStream out = System.out;
  private PrintStream err = System.err;

  @Override
  public Integer call() throws Exception {
    LoadConfig config = config();
    ServerEndpoint endpoint = ServerEndpoint.parse(serverAddress).withToken(token);
    ObjectNode summary;
    boolean passed = true;
    try (BufferAllocator allocator = new RootAllocator()) {
      try (LoadSession session = new LoadSession(config, endpoint, allocator, quiet ? null : err)) {
        if (createTables) {
          session.createTables();
        } else {
          session.requireTables();
        }
        session.start();
        Thread.sleep(duration.toMillis());
        session.stop();
        if (verify) {
          Verifier.Outcome outcome = new Verifier(endpoint, catalogId, session.sql(), settle,
              verifyTimeout, quiet ? null : err).verify(session.workloads());
          session.stopProbe();
          summary = session.summary();
          summary.set("verification", outcome.toJson());
          passed = outcome.passed();
        } else {
          session.stopProbe();
          summary = session.summary();
          summary.set("verification", Json.object().put("result", "skipped"));
        }
      }
    }
    String text = Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(summary);
    out.println(text);
    if (json != null) {
      Files.writeString(json, text + "\n", StandardCharsets.UTF_8);
    }
    return passed ? 0 : 1;
  }

  private boolean pointProbe() {
    return switch (probe.toLowerCase(Locale.ROOT)) {
      case "max" -> false;
      case "point" -> true;
      default -> throw SeException.invalid("--probe: expected max or point, got '%s'", probe);
    };
  }

  private LoadConfig config() {
    boolean entity = switch (mode.toLowerCase(Locale.ROOT)) {
      case "append" -> false;
      case "entity" -> true;
      default -> throw SeException.invalid("--mode: expected append or entity, got '%s'", mode);
    };
    double updates = updateRatio != null ? updateRatio : entity ? 0.5 : 0;
    double deletes = deleteRatio != null ? deleteRatio : entity ? 0.05 : 0;
    return new LoadConfig(catalogId, namespace, tablePrefix, tables, entity, rowBytes, keySpace,
        updates, deletes, concurrency, rate, batchRows, window, seed, pointProbe());
  }
}
