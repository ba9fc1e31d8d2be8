package io.storageengine.query;

import io.storageengine.duckdb.DuckRuntime;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.iceberg.catalog.Catalog;

/**
 * A {@link QueryEngine} over local catalogs of a {@link TestWarehouse} in a temporary directory,
 * for tests that drive the engine directly. Create the catalogs and their tables first, then
 * {@link #start} the engine; {@link #close} closes the engine, its DuckDB runtime and allocator
 * and deletes the directory.
 */
final class EngineFixture implements AutoCloseable {
  final Path dir;
  final BufferAllocator allocator = new RootAllocator();
  final TestWarehouse warehouse = new TestWarehouse();
  DuckRuntime duckdb;
  QueryEngine engine;

  private EngineFixture(Path dir) {
    this.dir = dir;
  }

  static EngineFixture create(String prefix) throws IOException {
    return new EngineFixture(Files.createTempDirectory(prefix));
  }

  /** The local catalog {@code catalogId}, under the fixture's directory. */
  Catalog catalog(String catalogId) {
    return warehouse.localCatalog(catalogId, dir.resolve(catalogId));
  }

  /** Opens DuckDB under the directory and the engine on it: one thread, 256 MB. */
  QueryEngine start() {
    return start(QueryConfig.defaults().withThreads(1).withMemoryLimit("256MB"));
  }

  /** Opens DuckDB under the directory and the engine on it, configured by {@code config}. */
  QueryEngine start(QueryConfig config) {
    duckdb = DuckRuntime.open(dir.resolve("local"), DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
    engine = new QueryEngine(warehouse, duckdb, config);
    return engine;
  }

  /** The result of {@code sql} on {@code engine}: its column names, then its rows (values joined by |). */
  static List<String> query(QueryEngine engine, BufferAllocator allocator, String catalogId, String sql,
      Map<String, SnapshotPin> pins) throws Exception {
    return read(engine, allocator, catalogId, sql, pins, true);
  }

  /** The rows of {@code sql} on {@code engine} (values joined by |), without the column names. */
  static List<String> rows(QueryEngine engine, BufferAllocator allocator, String catalogId, String sql) throws Exception {
    return read(engine, allocator, catalogId, sql, Map.of(), false);
  }

  private static List<String> read(QueryEngine engine, BufferAllocator allocator, String catalogId, String sql,
      Map<String, SnapshotPin> pins, boolean header) throws Exception {
    List<String> out = new ArrayList<>();
    try (PreparedQuery query = engine.prepare(catalogId, sql, pins);
        BufferAllocator child = allocator.newChildAllocator("test", 0, Long.MAX_VALUE);
        ArrowReader reader = query.execute(child, 1024)) {
      if (header) {
        out.add(String.join(",", reader.getVectorSchemaRoot().getSchema().getFields().stream().map(Field::getName).toList()));
      }
      while (reader.loadNextBatch()) {
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        for (int row = 0; row < root.getRowCount(); row++) {
          List<String> values = new ArrayList<>();
          for (int column = 0; column < root.getFieldVectors().size(); column++) {
            values.add(String.valueOf(root.getVector(column).getObject(row)));
          }
          out.add(String.join("|", values));
        }
      }
    }
    return out;
  }

  @Override
  public void close() throws Exception {
    if (engine != null) {
      engine.close();
    }
    if (duckdb != null) {
      duckdb.close();
    }
    allocator.close();
    TestWarehouse.deleteRecursively(dir);
  }
}
