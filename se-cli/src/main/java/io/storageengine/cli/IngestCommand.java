package io.storageengine.cli;

import io.storageengine.catalog.Tables;
import io.storageengine.common.SeException;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.wal.WalOperation;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code se ingest}: streams files into a table over the native Flight ingestion protocol. */
@Command(name = "ingest", mixinStandardHelpOptions = true,
    description = "Stream CSV, JSON lines, Parquet or Arrow IPC files into a table; prints rows acknowledged.")
final class IngestCommand implements Callable<Integer> {
  @Option(names = "--server-address", defaultValue = "http://127.0.0.1:7777", description = "Server (default ${DEFAULT-VALUE}).")
  String serverAddress;

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
    Schema tableSchema;
    try (RESTCatalog catalog = RemoteCatalog.open(serverAddress, catalogId)) {
      tableSchema = catalog.loadTable(ident).schema();
    } catch (org.apache.iceberg.exceptions.NoSuchTableException e) {
      throw SeException.notFound("table '%s' not found in catalog '%s'", ident, catalogId);
    }
    List<String> namespace = Arrays.asList(ident.namespace().levels());
    long totalRows = 0;
    long totalBytes = 0;
    long start = System.nanoTime();
    try (BufferAllocator allocator = new RootAllocator();
        IngestClient client = IngestClient.connect(location(serverAddress), allocator)) {
      for (Path file : files) {
        long rows = 0;
        try (FileBatches batches = FileBatches.open(file, FileBatches.detect(file, format), tableSchema, allocator, batchRows)) {
          ArrowReader reader = batches.reader();
          VectorSchemaRoot root = reader.getVectorSchemaRoot();
          List<CompletableFuture<Long>> acks = new ArrayList<>();
          try (IngestStream stream = client.open(catalogId, namespace, ident.name(), op, root.getSchema())) {
            while (reader.loadNextBatch()) {
              if (root.getRowCount() == 0) {
                continue;
              }
              acks.add(stream.send(root));
              rows += root.getRowCount();
              for (org.apache.arrow.vector.FieldVector v : root.getFieldVectors()) {
                totalBytes += v.getBufferSize();
              }
            }
            stream.finish();
          }
          CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).join();
        } catch (FlightRuntimeException e) {
          System.err.println("se: " + file + ": " + e.status().code() + ": " + e.getMessage());
          System.err.printf("se: %d rows acknowledged before the failure%n", totalRows);
          return 1;
        }
        totalRows += rows;
        System.out.printf("%s: %d rows acknowledged%n", file, rows);
      }
    }
    double seconds = Math.max(1e-9, (System.nanoTime() - start) / 1e9);
    System.out.printf("%d rows acknowledged in %.2f s (%.1f rows/s, %.2f MB/s of Arrow data)%n",
        totalRows, seconds, totalRows / seconds, totalBytes / seconds / 1e6);
    return 0;
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
