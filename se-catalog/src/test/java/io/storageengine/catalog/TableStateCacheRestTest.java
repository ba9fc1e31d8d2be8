package io.storageengine.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.rest.RESTCatalogServer;
import org.apache.iceberg.rest.RESTServerExtension;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link TableStateCache} over a real Iceberg REST catalog, whose refresh asks the server again. */
class TableStateCacheRestTest {
  private static final Path WAREHOUSE = tempDir();
  private static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));

  // One pooled connection: the server's JdbcCatalog lives on "jdbc:sqlite::memory:".
  @RegisterExtension
  static final RESTServerExtension REST = new RESTServerExtension(new HashMap<>(Map.of(
      RESTCatalogServer.REST_PORT, RESTServerExtension.FREE_PORT,
      "warehouse", WAREHOUSE.resolve("warehouse").toUri().toString(),
      "clients", "1")));

  private static Path tempDir() {
    try {
      return Files.createTempDirectory("se-state-cache-rest");
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @AfterAll
  static void cleanUp() throws IOException {
    try (Stream<Path> files = Files.walk(WAREHOUSE)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  private static RESTCatalog client() {
    RESTCatalog catalog = new RESTCatalog();
    catalog.initialize("upstream", Map.of("uri",
        "http://127.0.0.1:" + REST.config().get(RESTCatalogServer.REST_PORT)));
    return catalog;
  }

  @Test
  void queriesSeeEveryCommitDropsAndRecreations() throws Exception {
    TableStateCache cache = new TableStateCache();
    AtomicInteger loads = new AtomicInteger();
    TableIdentifier id = TableIdentifier.of(Namespace.of("rest_ns"), "events");
    try (RESTCatalog engine = client(); RESTCatalog writer = client()) {
      writer.createNamespace(Namespace.of("rest_ns"));
      writer.createTable(id, SCHEMA, PartitionSpec.unpartitioned());
      java.util.function.Supplier<Table> current = () -> cache.current("tenant", engine, id, () -> {
        loads.incrementAndGet();
        return engine.loadTable(id);
      });

      Table first = current.get();
      assertThat(first.properties()).doesNotContainKey("v");
      writer.loadTable(id).updateProperties().set("v", "1").commit();
      Table second = current.get();
      assertThat(second.properties()).containsEntry("v", "1");
      assertThat(first.properties()).as("an earlier query's view").doesNotContainKey("v");
      assertThat(loads).as("refreshed through the REST table operations").hasValue(1);

      writer.dropTable(id, false);
      assertThatThrownBy(current::get).isInstanceOf(NoSuchTableException.class);
      Table recreated = writer.createTable(id, SCHEMA, PartitionSpec.unpartitioned());
      assertThat(current.get().uuid()).isEqualTo(recreated.uuid()).isNotEqualTo(first.uuid());
    }
  }
}
