package io.storageengine.cli;

import io.storageengine.catalog.TableSettings;
import io.storageengine.catalog.Tables;
import io.storageengine.common.SeException;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.wal.WalOperation;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.LocationSchemes;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code se ingest}: streams files into a table over the native Flight ingestion protocol. */
@Command(name = "ingest", mixinStandardHelpOptions = true,
    description = "Stream CSV, JSON lines, Parquet or Arrow IPC files into a table; prints rows acknowledged.")
final class IngestCommand implements Callable<Integer> {
  /** Streams open at once per file, one per set of present columns (entity partial upserts). */
  private static final int MAX_STREAMS = 8;

  @Option(names = "--server-address", defaultValue = "http://127.0.0.1:7777", description = "Server (default ${DEFAULT-VALUE}).")
  String serverAddress;

  @CommandLine.Mixin
  TokenOption token;

  @CommandLine.Mixin
  TlsOption tls;

  @Option(names = "--catalog-id", required = true, description = "Tenant catalog id.")
  String catalogId;

  @Option(names = "--table", required = true, paramLabel = "NS.TABLE", description = "Target table, e.g. analytics.events.page_views")
  String table;

  @Option(names = "--operation", defaultValue = "upsert", description = "upsert (append tables: append) or delete (entity tables)")
  String operation;

  @Option(names = "--format", description = "csv, json, parquet or arrow (default: from the file extension)")
  String format;

  @Option(names = "--batch-rows", defaultValue = "65536", description = "Rows per Arrow batch (default ${DEFAULT-VALUE})")
  int batchRows;

  @Option(names = "--null-string", paramLabel = "TEXT",
      description = "CSV only: a cell with exactly this text is an explicit null (default: none). An empty unquoted"
          + " cell is absent (on entity tables the stored value is kept); a quoted \"\" is the empty string.")
  String nullString;

  @Option(names = "--skip-rows", paramLabel = "N", defaultValue = "0",
      description = "Leave out the first N rows of the first FILE (after a CSV header), e.g. to resume where a"
          + " refused row stopped a file: the failure prints the option to pass. CSV, JSON lines and Parquet.")
  long skipRows;

  @Parameters(arity = "1..*", paramLabel = "FILE")
  List<Path> files;

  @Override
  public Integer call() throws Exception {
    WalOperation op = switch (operation.toLowerCase(Locale.ROOT)) {
      case "upsert" -> WalOperation.UPSERT;
      case "delete" -> WalOperation.DELETE;
      default -> throw SeException.invalid("--operation: expected upsert or delete, got '%s'", operation);
    };
    TableIdentifier ident = Tables.parseIdentifier(table);
    org.apache.iceberg.Table loaded;
    try (RESTCatalog catalog = RemoteCatalog.open(serverAddress, catalogId, token.value(), tls.bundle())) {
      loaded = catalog.loadTable(ident);
    } catch (org.apache.iceberg.exceptions.NoSuchTableException e) {
      throw SeException.notFound("table '%s' not found in catalog '%s'", ident, catalogId);
    }
    Schema tableSchema = loaded.schema();
    // Absent and null differ for a partial upsert of an entity table (absent keeps the current
    // value) and in a column with a write default (absent gets the default); elsewhere an absent
    // column is null, and a delete reads only the key. Only entity rows are ordered by key.
    TableSettings settings = TableSettings.of(loaded);
    boolean entity = settings.entity();
    boolean writeDefaults = tableSchema.columns().stream().anyMatch(c -> c.writeDefault() != null);
    boolean perRowPresence = (entity || writeDefaults) && op == WalOperation.UPSERT;
    List<String> keyColumns = perRowPresence && entity ? List.copyOf(tableSchema.identifierFieldNames()) : List.of();
    List<String> required = new ArrayList<>(keyColumns);
    if (!keyColumns.isEmpty()) {
      settings.versionColumnName().ifPresent(required::add);
    }
    List<String> namespace = Arrays.asList(ident.namespace().levels());
    long totalRows = 0;
    long totalBytes = 0;
    long start = System.nanoTime();
    long skip = skipRows; // the first file's only
    try (BufferAllocator allocator = new RootAllocator();
        IngestClient client = connect(allocator)) {
      for (Path file : files) {
        FileBatches.Format fileFormat = FileBatches.detect(file, format);
        if (nullString != null && fileFormat != FileBatches.Format.CSV) {
          throw SeException.invalid("--null-string applies to CSV files only; %s is %s", file,
              fileFormat.name().toLowerCase(Locale.ROOT));
        }
        long rows = 0;
        // Each batch sent and its rows: on a failure, those acknowledged are durable and counted.
        List<Map.Entry<CompletableFuture<Long>, Integer>> sent = new ArrayList<>();
        SeException refused = null;
        FileBatches opened;
        try {
          opened = FileBatches.open(file, fileFormat, tableSchema, perRowPresence, nullString, allocator, batchRows,
              skip);
        } catch (SeException e) {
          // A file that cannot be read, or a bad value in its first rows (read before any batch).
          return refused(file, e, totalRows, skip);
        }
        try (FileBatches batches = opened;
            KeyOrderedSender sender = new KeyOrderedSender(client, catalogId, namespace, ident.name(), op, MAX_STREAMS)) {
          ArrowReader reader = batches.reader();
          VectorSchemaRoot root = reader.getVectorSchemaRoot();
          PresenceSplitter splitter = new PresenceSplitter(batches, keyColumns, required, allocator);
          TableCast cast = new TableCast(tableSchema, batches.dataColumns(), allocator, batches.skipped());
          try {
            while (batches.next()) {
              if (root.getRowCount() == 0) {
                continue;
              }
              try (TableCast.Batch typed = cast.apply(root)) {
                for (PresenceSplitter.Part part : splitter.split(typed.root())) {
                  try (part) {
                    int partRows = part.root().getRowCount();
                    sent.add(Map.entry(sender.send(part.root(), part.keys()), partRows));
                    rows += partRows;
                    for (org.apache.arrow.vector.FieldVector v : part.root().getFieldVectors()) {
                      totalBytes += v.getBufferSize();
                    }
                  }
                }
              }
            }
          } catch (SeException e) {
            // A row the file's reading refused (a value that does not fit, a key without a value):
            // the rows before it are sent already and are finished below, so all of them are
            // acknowledged when the error is reported.
            refused = e;
          }
          sender.finish();
        } catch (FlightRuntimeException e) {
          System.err.println("se: " + file + ": " + e.status().code() + ": " + TlsOption.tlsFailure(e)
              .map(ssl -> TlsOption.handshakeFailure(serverAddress, ssl)).orElse(e.getMessage()));
          System.err.printf("se: %d rows acknowledged before the failure%n", totalRows + acknowledged(sent));
          return 1;
        }
        if (refused != null) {
          return refused(file, refused, totalRows + rows, skip + rows);
        }
        skip = 0;
        totalRows += rows;
        System.out.printf("%s: %d rows acknowledged%n", file, rows);
      }
    }
    double seconds = Math.max(1e-9, (System.nanoTime() - start) / 1e9);
    System.out.printf("%d rows acknowledged in %.2f s (%.1f rows/s, %.2f MB/s of Arrow data)%n",
        totalRows, seconds, totalRows / seconds, totalBytes / seconds / 1e6);
    return 0;
  }

  /**
   * Reports {@code file}'s refusal (a file that cannot be read, or a row that does not fit) after
   * {@code acknowledged} rows were acknowledged, the file's first {@code done} rows among them
   * (skipped or acknowledged: a resume leaves them out), and returns the exit code.
   */
  private static int refused(Path file, SeException refused, long acknowledged, long done) {
    String message = String.valueOf(refused.getMessage());
    System.err.println("se: " + (message.startsWith(file.toString()) ? message
        : file + ": " + refused.code() + ": " + message));
    System.err.printf("se: %d rows acknowledged before the failure%n", acknowledged);
    if (done > 0) {
      System.err.printf("se: to go on from the refused row once it is mended: --skip-rows %d %s (and the files"
          + " after it)%n", done, file);
    }
    return Main.exitCode(refused);
  }

  /** Rows of the batches in {@code sent} whose acknowledgement arrived (their rows are durable). */
  private static long acknowledged(List<Map.Entry<CompletableFuture<Long>, Integer>> sent) {
    long rows = 0;
    for (Map.Entry<CompletableFuture<Long>, Integer> batch : sent) {
      if (batch.getKey().isDone() && !batch.getKey().isCompletedExceptionally()) {
        rows += batch.getValue();
      }
    }
    return rows;
  }

  private IngestClient connect(BufferAllocator allocator) {
    Location location = location(serverAddress);
    if (tls.bundle().isPresent() && LocationSchemes.GRPC_TLS.equals(location.getUri().getScheme())) {
      return IngestClient.connect(location, allocator, tls.bundle().get(), token.value().orElse(null));
    }
    return token.value().isPresent()
        ? IngestClient.connect(location, allocator, token.value().get())
        : IngestClient.connect(location, allocator);
  }

  /** {@code http://host:port} (the server address) as a Flight location on the same port. */
  static Location location(String serverAddress) {
    URI uri = URI.create(serverAddress.contains("://") ? serverAddress : "http://" + serverAddress);
    if (uri.getScheme().equals("https") || uri.getScheme().equals("grpc+tls")) {
      return Location.forGrpcTls(uri.getHost(), uri.getPort() < 0 ? 443 : uri.getPort());
    }
    return Location.forGrpcInsecure(uri.getHost(), uri.getPort() < 0 ? 7777 : uri.getPort());
  }
}
