package io.storageengine.stress.bench;

import io.grpc.netty.NettyServerBuilder;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.query.ContextPropagatingExecutorService;
import io.storageengine.query.QueryConfig;
import io.storageengine.query.QueryFlightSqlProducer;
import io.storageengine.query.QueryMetadataInterceptor;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.TombstoneCache;
import io.storageengine.reconcile.WalTailRows;
import io.storageengine.wal.ObjectStoreWal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.Location;
import io.grpc.netty.NettyServerBuilder;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.jdbc.JdbcCatalog;

/** What the in-process benchmarks set up alike: their catalog, a query server, their scratch directory. */
final class BenchFixtures {
  private BenchFixtures() {}

  /** A JDBC catalog {@code bench} on SQLite in {@code dir}, with the namespace {@code bench}. */
  static JdbcCatalog sqliteCatalog(Path dir) {
    JdbcCatalog catalog = new JdbcCatalog();
    catalog.setConf(new org.apache.hadoop.conf.Configuration());
    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.URI, "jdbc:sqlite:" + dir.resolve("catalog.db"));
    props.put(CatalogProperties.WAREHOUSE_LOCATION, dir.resolve("warehouse").toUri().toString());
    props.put("jdbc.schema-version", "V1");
    // Table files go through the engine's FileIO, as the catalogs of se dev and the servers do.
    props.put(CatalogProperties.FILE_IO_IMPL, io.storageengine.catalog.TracingFileIO.class.getName());
    catalog.initialize("bench", props);
    catalog.createNamespace(Namespace.of("bench"));
    return catalog;
  }

  /** Deletes {@code dir} and everything below it, as far as it can. */
  static void deleteRecursively(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  /**
   * The engine's Flight SQL producer over {@code catalog} (the only tenant, for every catalog id)
   * on a local Flight server, with a client; read your own writes through {@code wal}. Closing
   * it closes the client, the server, its threads and the producer, not what it was given.
   */
  static final class QueryServer implements AutoCloseable {
    private final ExecutorService executor = Executors.newCachedThreadPool();
    private final QueryFlightSqlProducer producer;
    private final FlightServer server;
    private final FlightClient client;
    private final FlightSqlClient sql;

    QueryServer(BufferAllocator allocator, org.apache.iceberg.catalog.Catalog catalog,
        DuckRuntime duckdb, ObjectStore store, ObjectStoreWal wal, TombstoneCache tombstones,
        int threads) throws IOException {
      producer = new QueryFlightSqlProducer(allocator, id -> catalog, duckdb,
          QueryConfig.defaults().withThreads(threads), wal, new WalTailRows(duckdb, allocator, store,
          tombstones, ReconcileOptions.defaults().withDuckdbThreads(threads)));
      Consumer<NettyServerBuilder> intercept = builder -> builder.intercept(new QueryMetadataInterceptor());
      server = FlightServer.builder(allocator, Location.forGrpcInsecure("127.0.0.1", 0), producer)
          .executor(new ContextPropagatingExecutorService(executor))
          .transportHint("grpc.builderConsumer", intercept)
          .build()
          .start();
      client = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.getPort())).build();
      sql = new FlightSqlClient(client);
    }

    FlightSqlClient sql() {
      return sql;
    }

    FlightClient client() {
      return client;
    }

    @Override
    public void close() throws Exception {
      sql.close();
      client.close();
      server.shutdown();
      server.awaitTermination();
      executor.shutdownNow();
      producer.close();
    }
  }
}
