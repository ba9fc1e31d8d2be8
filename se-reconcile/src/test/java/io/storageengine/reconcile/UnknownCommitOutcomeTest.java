package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.reconcile.maintenance.Maintainer;
import io.storageengine.reconcile.maintenance.MaintenanceHooks;
import io.storageengine.reconcile.maintenance.MaintenanceResult;
import io.storageengine.wal.TableWal;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.rest.RESTCatalogServer;
import org.apache.iceberg.rest.RESTServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Commits whose outcome the client never learns: Iceberg's REST catalog server behind a proxy
 * that loses the commit's response, and a JDBC catalog whose connection drops right after the
 * update ran. Reconcile and compaction must decide from the table: no row lost (no referenced
 * file deleted), none doubled (no WAL range applied twice), and the next pass goes on cleanly.
 */
class UnknownCommitOutcomeTest {
  private static final String TABLE = "events";
  private static final int ROWS_PER_SEGMENT = 10;

  @TempDir Path dir;

  /** Iceberg's REST catalog server over the test environment's SQLite catalog, behind the proxy. */
  private static final class LossyRest implements AutoCloseable {
    /** RESTServerExtension asks the context only whether to start a local server (it should). */
    private static final ExtensionContext CONTEXT = (ExtensionContext) java.lang.reflect.Proxy.newProxyInstance(
        UnknownCommitOutcomeTest.class.getClassLoader(), new Class<?>[] {ExtensionContext.class},
        (p, m, a) -> m.getName().equals("getConfigurationParameter") ? Optional.empty() : null);

    final RESTServerExtension server;
    final ResponseLosingProxy proxy;
    final RESTCatalog client;

    LossyRest(Path dir) throws Exception {
      server = new RESTServerExtension(new HashMap<>(Map.of(
          RESTCatalogServer.REST_PORT, RESTServerExtension.FREE_PORT,
          RESTCatalogServer.CATALOG_NAME, TestEnvironment.CATALOG,
          CatalogProperties.CATALOG_IMPL, BackendCatalog.class.getName(),
          BackendCatalog.DATABASE, "jdbc:sqlite:" + dir.resolve("catalog.db"),
          "jdbc.schema-version", "V1",
          CatalogProperties.WAREHOUSE_LOCATION, dir.resolve("warehouse").toUri().toString())));
      server.beforeAll(CONTEXT);
      proxy = new ResponseLosingProxy(URI.create("http://127.0.0.1:" + server.config().get(RESTCatalogServer.REST_PORT)));
      client = new RESTCatalog();
      // One retry of a failed idempotent request (the default is five, with growing pauses).
      client.initialize(TestEnvironment.CATALOG, Map.of(CatalogProperties.URI, proxy.uri(),
          "rest.client.max-retries", "1"));
    }

    @Override
    public void close() throws Exception {
      client.close();
      proxy.close();
      server.afterAll(CONTEXT);
    }
  }

  /**
   * The REST server's catalog: a JdbcCatalog on the database named by {@value #DATABASE} (the
   * server's own {@code uri} setting is also the URI its fixture gives its client).
   */
  public static final class BackendCatalog extends JdbcCatalog {
    static final String DATABASE = "backend.database";

    @Override
    public void initialize(String name, Map<String, String> properties) {
      Map<String, String> props = new HashMap<>(properties);
      props.put(CatalogProperties.URI, properties.get(DATABASE));
      super.initialize(name, props);
    }
  }

  /** A second JdbcCatalog on the environment's SQLite file, through {@link ConnectionLosingDriver}. */
  private static JdbcCatalog losingJdbc(Path dir) {
    JdbcCatalog catalog = new JdbcCatalog();
    catalog.setConf(new org.apache.hadoop.conf.Configuration());
    catalog.initialize(TestEnvironment.CATALOG, Map.of(
        CatalogProperties.URI, ConnectionLosingDriver.url(sqliteTarget(dir)),
        CatalogProperties.WAREHOUSE_LOCATION, dir.resolve("warehouse").toUri().toString(),
        "jdbc.schema-version", "V1"));
    return catalog;
  }

  private static String sqliteTarget(Path dir) {
    return "sqlite:" + dir.resolve("catalog.db");
  }

  /** An append table with a WAL of {@code segments} segments, ids 0.. in order. */
  private static TableWal appendTable(TestEnvironment env, int segments) {
    Table table = env.createTable(TABLE, AppendTableTest.SCHEMA, PartitionSpec.unpartitioned(),
        SortOrder.unsorted(), Map.of());
    TableWal tw = env.walOf(table, TABLE);
    write(env, tw, 0, segments);
    return tw;
  }

  private static void write(TestEnvironment env, TableWal tw, int fromSegment, int segments) {
    for (int s = fromSegment; s < fromSegment + segments; s++) {
      env.append(tw, AppendTableTest.frame(env, (long) s * ROWS_PER_SEGMENT, ROWS_PER_SEGMENT));
    }
  }

  /** The table as the catalog's database holds it, read around any fault injection. */
  private static Table truth(TestEnvironment env) {
    return env.catalog.loadTable(TableIdentifier.of("db", TABLE));
  }

  /** Iceberg's generic reader returns ids 0..rows-1, each once. */
  private static void assertEveryRowOnce(TestEnvironment env, long rows, String context) {
    List<Long> ids = new ArrayList<>();
    for (Record r : TestEnvironment.readAll(truth(env))) {
      ids.add((Long) r.getField("id"));
    }
    ids.sort(null);
    assertThat(ids).as(context).isEqualTo(LongStream.range(0, rows).boxed().toList());
  }

  /** Every manifest list and manifest of every snapshot, and every live file, exists. */
  private static void assertReferencedFilesExist(TestEnvironment env, String context) throws IOException {
    assertReferencedFilesExist(truth(env), context);
  }

  private static void assertReferencedFilesExist(Table table, String context) throws IOException {
    table.refresh();
    for (Snapshot s : table.snapshots()) {
      assertThat(table.io().newInputFile(s.manifestListLocation()).exists())
          .as("%s: manifest list of snapshot %s", context, s.snapshotId()).isTrue();
      for (ManifestFile m : s.allManifests(table.io())) {
        assertThat(table.io().newInputFile(m.path()).exists()).as("%s: manifest %s", context, m.path()).isTrue();
      }
    }
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask t : tasks) {
        assertThat(table.io().newInputFile(t.file().location()).exists())
            .as("%s: data file %s", context, t.file().location()).isTrue();
        for (DeleteFile d : t.deletes()) {
          assertThat(table.io().newInputFile(d.location()).exists())
              .as("%s: delete file %s", context, d.location()).isTrue();
        }
      }
    }
  }

  private static int snapshots(TestEnvironment env) {
    int n = 0;
    for (Snapshot ignored : truth(env).snapshots()) {
      n++;
    }
    return n;
  }

  private static long parquetFilesOnDisk(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir.resolve("warehouse"))) {
      return files.filter(p -> p.toString().endsWith(".parquet")).count();
    }
  }

  private static List<String> liveDataFiles(TestEnvironment env) throws IOException {
    List<String> files = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = truth(env).newScan().planFiles()) {
      tasks.forEach(t -> files.add(t.file().location()));
    }
    return files;
  }

  private static Maintainer maintainer(TestEnvironment env) {
    return new Maintainer(env.catalogs, env.wal, env.store, env.tombstones, env.allocator, env.duckdb, TestEnvironment.options(),
        MaintenanceFixture.compactingPolicy(), MaintenanceHooks.NONE);
  }

  /** The reconcile pass after the fault: more WAL commits once, on top of what landed. */
  private static void assertNextPassesDoNotDuplicate(TestEnvironment env, TableWal tw, int segmentsSoFar)
      throws IOException {
    write(env, tw, segmentsSoFar, 2);
    ReconcileResult next = env.reconciler(TestEnvironment.options()).reconcile(tw);
    assertThat(next.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
    assertThat(next.fromSeq()).isEqualTo(segmentsSoFar + 1);
    assertThat(next.toSeq()).isEqualTo(segmentsSoFar + 2);
    assertThat(env.reconciler(TestEnvironment.options()).reconcile(tw).outcome())
        .isEqualTo(ReconcileResult.Outcome.UP_TO_DATE);
    assertEveryRowOnce(env, (long) (segmentsSoFar + 2) * ROWS_PER_SEGMENT, "after the next pass");
    assertReferencedFilesExist(env, "after the next pass");
  }

  @ParameterizedTest
  @EnumSource(value = ResponseLosingProxy.Loss.class, names = {"AFTER_COMMIT_500", "AFTER_COMMIT_RESET"})
  void reconcileCommitThatLandedBehindALostRestResponseCountsAsCommitted(ResponseLosingProxy.Loss loss)
      throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir); LossyRest rest = new LossyRest(dir)) {
      TableWal tw = appendTable(env, 3);
      env.servedCatalog = rest.client;
      rest.proxy.loseNext(1, loss);

      ReconcileResult result = env.reconciler(TestEnvironment.options()).reconcile(tw);

      assertThat(rest.proxy.outcomesLost).hasValue(1);
      assertThat(rest.proxy.commitsForwarded).as("the range is committed once, never re-sent").hasValue(1);
      assertThat(result.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(result.fromSeq()).isEqualTo(1);
      assertThat(result.toSeq()).isEqualTo(3);
      assertThat(result.attempts()).isEqualTo(1);
      assertThat(env.wal.state(tw).publishedSeq()).isEqualTo(3);
      assertThat(snapshots(env)).isEqualTo(1);
      assertEveryRowOnce(env, 30, "after the lost response");
      assertReferencedFilesExist(env, "after the lost response");
      assertNextPassesDoNotDuplicate(env, tw, 3);
    }
  }

  @Test
  void reconcileCommitWithUnknownOutcomeThatDidNotLandKeepsItsFilesAndCommitsOnce() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir); LossyRest rest = new LossyRest(dir)) {
      TableWal tw = appendTable(env, 3);
      env.servedCatalog = rest.client;
      rest.proxy.loseNext(1, ResponseLosingProxy.Loss.BEFORE_COMMIT_500);

      ReconcileResult result = env.reconciler(TestEnvironment.options()).reconcile(tw);

      assertThat(rest.proxy.outcomesLost).hasValue(1);
      assertThat(rest.proxy.commitsForwarded).hasValue(1);
      assertThat(result.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(result.toSeq()).isEqualTo(3);
      assertThat(result.attempts()).as("restarted after the unknown outcome").isEqualTo(2);
      assertThat(snapshots(env)).isEqualTo(1);
      assertEveryRowOnce(env, 30, "after the restart");
      assertReferencedFilesExist(env, "after the restart");
      // The first attempt's file was not deleted: its outcome was unknown. Orphan cleanup owns it.
      assertThat(parquetFilesOnDisk(dir)).isEqualTo(liveDataFiles(env).size() + 1L);
      assertNextPassesDoNotDuplicate(env, tw, 3);
    }
  }

  @ParameterizedTest
  @EnumSource(value = ResponseLosingProxy.Loss.class, names = {"AFTER_COMMIT_500", "AFTER_COMMIT_RESET"})
  void compactionThatLandedBehindALostRestResponseKeepsItsFiles(ResponseLosingProxy.Loss loss) throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir); LossyRest rest = new LossyRest(dir)) {
      TableWal tw = appendTable(env, 0);
      env.servedCatalog = rest.client;
      for (int s = 0; s < 4; s++) {
        write(env, tw, s, 1);
        assertThat(env.reconciler(TestEnvironment.options()).reconcile(tw).outcome())
            .isEqualTo(ReconcileResult.Outcome.COMMITTED);
      }
      assertThat(liveDataFiles(env)).hasSize(4);
      int forwardedBefore = rest.proxy.commitsForwarded.get();
      rest.proxy.loseNext(1, loss);

      MaintenanceResult result = maintainer(env).maintain(tw);

      assertThat(rest.proxy.outcomesLost).hasValue(1);
      assertThat(rest.proxy.commitsForwarded.get() - forwardedBefore).isEqualTo(1);
      assertThat(result.errors()).isEmpty();
      assertThat(result.outcome()).isEqualTo(MaintenanceResult.Outcome.MAINTAINED);
      assertThat(result.compaction().groups()).isEqualTo(1);
      assertThat(result.compaction().dataFilesRemoved()).isEqualTo(4);
      assertThat(result.compaction().conflicts()).isZero();
      assertThat(truth(env).currentSnapshot().operation()).isEqualTo("replace");
      List<String> live = liveDataFiles(env);
      assertThat(live).hasSize(1);
      assertEveryRowOnce(env, 40, "after the lost compaction response");
      assertReferencedFilesExist(env, "after the lost compaction response");

      assertNextPassesDoNotDuplicate(env, tw, 4);
      MaintenanceResult again = maintainer(env).maintain(tw);
      assertThat(again.errors()).isEmpty();
      assertEveryRowOnce(env, 60, "after the next compaction");
      assertReferencedFilesExist(env, "after the next compaction");
    }
  }

  @ParameterizedTest
  @EnumSource(value = ResponseLosingProxy.Loss.class, names = {"AFTER_COMMIT_500", "AFTER_COMMIT_RESET"})
  void sliceSplitThatLandedBehindALostRestResponseCountsAsDone(ResponseLosingProxy.Loss loss) throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir); LossyRest rest = new LossyRest(dir)) {
      Table table = env.createTable(TABLE, EntityModelTest.SCHEMA, PartitionSpec.unpartitioned(), SortOrder.unsorted(),
          Map.of(io.storageengine.catalog.TableProperties.MODE, io.storageengine.catalog.TableProperties.MODE_ENTITY,
              io.storageengine.catalog.TableProperties.VERSION_COLUMN, "ver",
              io.storageengine.catalog.TableProperties.SLICE_COUNT, "2"));
      TableWal tw = env.walOf(table, TABLE);
      env.servedCatalog = rest.client;
      EntityModel model = new EntityModel(EntityModelTest.NON_KEY);
      model.applyBatch(SlicedTableTest.append(env, tw, SlicedTableTest.upserts(0, 100, 1)));
      model.applyBatch(SlicedTableTest.append(env, tw, SlicedTableTest.deletes(90, 100, 2)));
      env.reconciler(TestEnvironment.options()).reconcile(tw);
      rest.proxy.loseNext(1, loss);

      Optional<String> split = maintainer(env).splitSlice(TestEnvironment.CATALOG, TableIdentifier.of("db", TABLE), 1);

      assertThat(rest.proxy.outcomesLost).hasValue(1);
      assertThat(split).contains("split [1] -> [2, 3]");
      assertThat(truth(env).currentSnapshot().operation()).isEqualTo("replace");
      assertThat(SliceMeta.read(env.store, tw).orElseThrow().slices()).extracting(
          io.storageengine.catalog.TableSlices.Slice::id).containsExactly(0, 2, 3);
      EntityModelTest.assertMatches(truth(env), model, "after the lost split response");
      assertReferencedFilesExist(env, "after the lost split response");
      model.applyBatch(SlicedTableTest.append(env, tw, SlicedTableTest.upserts(50, 150, 3)));
      env.reconciler(TestEnvironment.options()).reconcile(tw);
      EntityModelTest.assertMatches(truth(env), model, "after a pass over the split slices");
      SlicedTableTest.assertSlicesConsistent(env, tw, truth(env));
    }
  }

  /**
   * SQLState 08S01 (communication link failure, as MySQL reports it) reaches Iceberg's client as
   * a connection error; 08006 (connection failure, as PostgreSQL reports it) makes Iceberg's
   * JDBC pool reconnect and run the update again, which then matches nothing and reports a
   * conflict with the commit that already landed.
   */
  @ParameterizedTest
  @ValueSource(strings = {"08S01", "08006"})
  void reconcileCommitThatLandedBeforeTheJdbcConnectionWasLostCountsAsCommitted(String sqlState)
      throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir); JdbcCatalog losing = losingJdbc(dir)) {
      TableWal tw = appendTable(env, 3);
      env.servedCatalog = losing;
      ConnectionLosingDriver.loseAfterNextUpdates(sqliteTarget(dir), 1, sqlState);

      ReconcileResult result = env.reconciler(TestEnvironment.options()).reconcile(tw);

      assertThat(result.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(result.toSeq()).isEqualTo(3);
      assertThat(result.attempts()).isEqualTo(1);
      assertThat(env.wal.state(tw).publishedSeq()).isEqualTo(3);
      assertThat(snapshots(env)).isEqualTo(1);
      assertEveryRowOnce(env, 30, "after the lost connection");
      assertReferencedFilesExist(env, "after the lost connection");
      assertNextPassesDoNotDuplicate(env, tw, 3);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"08S01", "08006"})
  void compactionThatLandedBeforeTheJdbcConnectionWasLostKeepsItsFiles(String sqlState) throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir); JdbcCatalog losing = losingJdbc(dir)) {
      TableWal tw = appendTable(env, 0);
      env.servedCatalog = losing;
      for (int s = 0; s < 4; s++) {
        write(env, tw, s, 1);
        env.reconciler(TestEnvironment.options()).reconcile(tw);
      }
      assertThat(liveDataFiles(env)).hasSize(4);
      ConnectionLosingDriver.loseAfterNextUpdates(sqliteTarget(dir), 1, sqlState);

      MaintenanceResult result = maintainer(env).maintain(tw);

      assertThat(result.errors()).isEmpty();
      assertThat(result.compaction().groups()).isEqualTo(1);
      assertThat(result.compaction().dataFilesRemoved()).isEqualTo(4);
      assertThat(liveDataFiles(env)).hasSize(1);
      assertEveryRowOnce(env, 40, "after the lost connection");
      assertReferencedFilesExist(env, "after the lost connection");
      assertNextPassesDoNotDuplicate(env, tw, 4);
    }
  }

  /**
   * The commit's own check cannot reload the table (the load right after the lost response
   * fails too, and so does its retry): Iceberg's client neither retries nor cleans up, and the pass decides from the
   * table it reloads afterwards.
   */
  @Test
  void reconcileDecidesFromTheReloadedTableWhenTheCommitCannotCheck() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir); LossyRest rest = new LossyRest(dir)) {
      TableWal tw = appendTable(env, 3);
      env.servedCatalog = rest.client;
      rest.proxy.loseNext(1, ResponseLosingProxy.Loss.AFTER_COMMIT_RESET);
      rest.proxy.failNextLoads(2); // the load and its one retry

      ReconcileResult result = env.reconciler(TestEnvironment.options()).reconcile(tw);

      assertThat(rest.proxy.commitsForwarded).hasValue(1);
      assertThat(result.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(result.toSeq()).isEqualTo(3);
      assertThat(result.attempts()).isEqualTo(1);
      assertThat(snapshots(env)).isEqualTo(1);
      assertEveryRowOnce(env, 30, "after the lost response and load");
      assertReferencedFilesExist(env, "after the lost response and load");
      assertNextPassesDoNotDuplicate(env, tw, 3);
    }
  }

  @Test
  void compactionDecidesFromTheReloadedTableWhenTheCommitCannotCheck() throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir); LossyRest rest = new LossyRest(dir)) {
      TableWal tw = appendTable(env, 0);
      env.servedCatalog = rest.client;
      for (int s = 0; s < 4; s++) {
        write(env, tw, s, 1);
        env.reconciler(TestEnvironment.options()).reconcile(tw);
      }
      rest.proxy.loseNext(1, ResponseLosingProxy.Loss.AFTER_COMMIT_RESET);
      rest.proxy.failNextLoads(2); // the load and its one retry

      MaintenanceResult result = maintainer(env).maintain(tw);

      assertThat(result.errors()).isEmpty();
      assertThat(result.compaction().groups()).isEqualTo(1);
      assertThat(liveDataFiles(env)).hasSize(1);
      assertEveryRowOnce(env, 40, "after the lost response and load");
      assertReferencedFilesExist(env, "after the lost response and load");
      assertNextPassesDoNotDuplicate(env, tw, 4);
    }
  }

  /** An entity pass (row delta: new rows and deletion vectors over existing files). */
  @ParameterizedTest
  @ValueSource(strings = {"08S01", "08006"})
  void entityCommitThatLandedBeforeTheJdbcConnectionWasLostIsAppliedOnce(String sqlState) throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir); JdbcCatalog losing = losingJdbc(dir)) {
      MaintenanceFixture f = new MaintenanceFixture(env, "entity", Map.of());
      f.write(false, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
      assertThat(f.reconcile().outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      f.write(false, 2, 0, 2, 4, 10);
      f.write(true, 3, 1, 3);
      env.servedCatalog = losing;
      ConnectionLosingDriver.loseAfterNextUpdates(sqliteTarget(dir), 1, sqlState);

      ReconcileResult result = f.reconcile();

      assertThat(result.outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
      assertThat(result.fromSeq()).isEqualTo(2);
      assertThat(result.toSeq()).isEqualTo(3);
      assertThat(result.attempts()).isEqualTo(1);
      assertThat(result.deleteVectors()).isPositive();
      f.table.refresh();
      int snapshots = 0;
      for (Snapshot ignored : f.table.snapshots()) {
        snapshots++;
      }
      assertThat(snapshots).isEqualTo(2);
      f.assertMatchesModel("after the lost connection");
      assertReferencedFilesExist(f.table, "after the lost connection");

      f.write(false, 4, 1, 5, 11);
      assertThat(f.reconcile().fromSeq()).isEqualTo(4);
      assertThat(f.reconcile().outcome()).isEqualTo(ReconcileResult.Outcome.UP_TO_DATE);
      f.assertMatchesModel("after the next pass");
      assertReferencedFilesExist(f.table, "after the next pass");
    }
  }
}
