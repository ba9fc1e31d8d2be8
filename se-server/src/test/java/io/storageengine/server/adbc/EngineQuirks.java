package io.storageengine.server.adbc;

import io.storageengine.server.ConfigKey;
import io.storageengine.server.EngineServer;
import io.storageengine.server.Role;
import io.storageengine.server.ServerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.arrow.adbc.core.AdbcDatabase;
import org.apache.arrow.adbc.core.AdbcDriver;
import org.apache.arrow.adbc.core.AdbcException;
import org.apache.arrow.adbc.driver.flightsql.FlightSqlConnectionProperties;
import org.apache.arrow.adbc.driver.flightsql.FlightSqlDriver;
import org.apache.arrow.adbc.driver.testsuite.SqlValidationQuirks;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * How the engine differs from what ADBC's validation suite assumes: a real {@link EngineServer}
 * (DEV role, port 0) whose tenant {@value #CATALOG_ID} is selected with the {@code se-query-metadata}
 * call header of the stock ADBC Flight SQL driver. Tables live in the tenant's namespace
 * {@value #NAMESPACE}, which unqualified names read. Times and timestamps are microseconds, as
 * in Iceberg. Tables are created and filled through the engine's own Flight SQL bulk ingest
 * ({@link #ingest}), since the driver's bulk ingest sends {@code CREATE TABLE}/{@code INSERT} SQL,
 * which the read-only query engine refuses.
 */
final class EngineQuirks extends SqlValidationQuirks implements AutoCloseable {
  static final String CATALOG_ID = "warehouse";
  static final String NAMESPACE = "default";

  private final Path dataDir;
  private final EngineServer server;

  EngineQuirks() throws Exception {
    dataDir = Files.createTempDirectory("adbc-validation");
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dataDir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "50ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "100ms"), Role.DEV);
    Catalog catalog = catalog();
    if (catalog instanceof SupportsNamespaces namespaces && !namespaces.namespaceExists(Namespace.of(NAMESPACE))) {
      namespaces.createNamespace(Namespace.of(NAMESPACE));
    }
  }

  Catalog catalog() {
    return server.registry().catalog(CATALOG_ID);
  }

  String uri() {
    return "grpc+tcp://127.0.0.1:" + server.port();
  }

  @Override
  public AdbcDatabase initDatabase(BufferAllocator allocator) throws AdbcException {
    Map<String, Object> parameters = new HashMap<>();
    parameters.put(AdbcDriver.PARAM_URI.getKey(), uri());
    parameters.put(FlightSqlConnectionProperties.RPC_CALL_HEADER_PREFIX + "se-query-metadata",
        "{\"catalog_id\":\"" + CATALOG_ID + "\"}");
    return new FlightSqlDriver(allocator).open(parameters);
  }

  /**
   * Creates table {@code name} in {@value #NAMESPACE} from {@code root}'s schema and appends its
   * rows through Flight SQL bulk ingest, then waits until a query sees them.
   */
  void ingest(String name, VectorSchemaRoot root) throws Exception {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"" + CATALOG_ID + "\"}");
    HeaderCallOption tenant = new HeaderCallOption(headers);
    try (BufferAllocator allocator = new RootAllocator();
        FlightSqlClient client = new FlightSqlClient(FlightClient.builder(allocator,
            Location.forGrpcInsecure("127.0.0.1", server.port())).build())) {
      TableDefinitionOptions create = TableDefinitionOptions.newBuilder()
          .setIfNotExist(TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE)
          .setIfExists(TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_APPEND).build();
      client.executeIngest(root, new FlightSqlClient.ExecuteIngestOptions(name, create, null, NAMESPACE, Map.of()),
          tenant);
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (rowCount(client, name, tenant) < root.getRowCount()) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("ingested rows of " + name + " not visible after 30 s");
        }
        Thread.sleep(20);
      }
    }
  }

  private static long rowCount(FlightSqlClient client, String name, HeaderCallOption tenant) throws Exception {
    var info = client.execute("SELECT count(*) FROM " + name, tenant);
    try (var stream = client.getStream(info.getEndpoints().get(0).getTicket(), tenant)) {
      stream.next();
      return ((org.apache.arrow.vector.BigIntVector) stream.getRoot().getVector(0)).get(0);
    }
  }

  @Override
  public void cleanupTable(String name) {
    catalog().dropTable(TableIdentifier.of(NAMESPACE, name), true);
  }

  @Override
  public String defaultCatalog() {
    return "default";
  }

  @Override
  public String defaultDbSchema() {
    return NAMESPACE;
  }

  /**
   * The engine keeps a name's case as written (DuckDB preserves it, and compares ignoring case);
   * the suite writes the names of its SQL in upper case ({@code SELECT ? AS FOO}).
   */
  @Override
  public String caseFoldColumnName(String name) {
    return name.toUpperCase(java.util.Locale.ROOT);
  }

  @Override
  public TimeUnit defaultTimeUnit() {
    return TimeUnit.MICROSECOND;
  }

  @Override
  public TimeUnit defaultTimestampUnit() {
    return TimeUnit.MICROSECOND;
  }

  @Override
  public void close() throws Exception {
    server.close();
    try (var files = Files.walk(dataDir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    }
  }
}
