package io.storageengine.stress.bench;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableProperties;
import io.storageengine.common.Json;
import io.storageengine.duckdb.DuckRuntime;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.reconcile.ReconcileOptions;
import io.storageengine.reconcile.ReconcileResult;
import io.storageengine.reconcile.Reconciler;
import io.storageengine.reconcile.TombstoneCache;
import io.storageengine.reconcile.maintenance.Maintainer;
import io.storageengine.reconcile.maintenance.MaintenancePolicy;
import io.storageengine.reconcile.maintenance.MaintenanceResult;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableName;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

/**
 * Soak of continuous reconciliation with maintenance on, printed as one JSON object. A writer
 * thread appends one WAL segment to an append table and one to an entity table every interval
 * (default 100 ms, time compressed: the engine's 1 commit/s at 10x) and reconciles both; a
 * maintenance thread runs {@link Maintainer#maintainAll} every few seconds with a time-compressed
 * policy. Every sample reports live data and delete files, manifests, snapshots, files on disk
 * and WAL segments per table, and query latencies (entity full scan, append point lookup). At
 * the end the WAL is drained and every row is checked against a model: append ids exactly once,
 * entity rows equal to the last operation per key, entity row ids kept across rewrites.
 * Arguments: {@code --seconds N}, {@code --interval-ms N}, {@code --maintain-seconds N},
 * {@code --sample-seconds N}, {@code --append-rows N}, {@code --entity-ops N},
 * {@code --entity-keys N}, {@code --maintenance true|false}.
 */
public final class MaintenanceSoak {
  private static final Schema EVENTS = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "cat", Types.StringType.get()),
      Types.NestedField.optional(3, "v", Types.IntegerType.get()));
  private static final Schema ENTITY = new Schema(List.of(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.required(2, "ver", Types.LongType.get()),
      Types.NestedField.optional(3, "a", Types.StringType.get()),
      Types.NestedField.optional(4, "b", Types.IntegerType.get())), Set.of(1));
  private static final String CATALOG = "soak";

  private final BufferAllocator allocator = new RootAllocator();
  private final TombstoneCache tombstones = TombstoneCache.create();
  private final DuckRuntime duckdb = DuckRuntime.temporary(DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
  private final MemoryObjectStore store = new MemoryObjectStore();
  private final ObjectStoreWal wal = new ObjectStoreWal(store, "soak");
  private final JdbcCatalog catalog = new JdbcCatalog();
  private final Path dir;
  private final Reconciler reconciler;
  private final Maintainer maintainer;
  private final Random rnd = new Random(42);

  // Model: append ids 0..nextId-1; entity key -> {ver, a, b} (the last operation wins: versions rise).
  private long nextId;
  private long nextVersion = 1;
  private final Map<Long, Object[]> entityModel = new ConcurrentHashMap<>();
  private final Set<Long> deletedSinceLineage = ConcurrentHashMap.newKeySet();

  private MaintenanceSoak(Path dir) {
    this.dir = dir;
    catalog.setConf(new org.apache.hadoop.conf.Configuration());
    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.URI, "jdbc:sqlite:" + dir.resolve("catalog.db"));
    props.put(CatalogProperties.WAREHOUSE_LOCATION, dir.resolve("warehouse").toUri().toString());
    props.put("jdbc.schema-version", "V1");
    catalog.initialize(CATALOG, props);
    catalog.createNamespace(Namespace.of("soak"));
    ReconcileOptions options = ReconcileOptions.defaults().withDuckdbThreads(1);
    reconciler = new Reconciler(id -> catalog, wal, store, tombstones, allocator, duckdb, options);
    // Time-compressed policy: what is an hour or a day in production is seconds here.
    MaintenancePolicy policy = new MaintenancePolicy(true, MaintenancePolicy.DEFAULT_TARGET_FILE_SIZE,
        MaintenancePolicy.DEFAULT_MIN_INPUT_FILES, MaintenancePolicy.DEFAULT_DELETE_RATIO, Duration.ofSeconds(20),
        MaintenancePolicy.DEFAULT_MIN_SNAPSHOTS, Duration.ofSeconds(30), Duration.ofSeconds(5), 20);
    maintainer = new Maintainer(id -> catalog, wal, store, tombstones, allocator, duckdb, options, policy);
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    long seconds = Long.parseLong(opts.getOrDefault("seconds", "180"));
    long intervalMs = Long.parseLong(opts.getOrDefault("interval-ms", "100"));
    long maintainSeconds = Long.parseLong(opts.getOrDefault("maintain-seconds", "5"));
    long sampleSeconds = Long.parseLong(opts.getOrDefault("sample-seconds", "15"));
    int appendRows = Integer.parseInt(opts.getOrDefault("append-rows", "200"));
    int entityOps = Integer.parseInt(opts.getOrDefault("entity-ops", "40"));
    int entityKeys = Integer.parseInt(opts.getOrDefault("entity-keys", "5000"));
    boolean maintenance = Boolean.parseBoolean(opts.getOrDefault("maintenance", "true"));

    Path dir = Files.createTempDirectory("se-maintenance-soak-");
    MaintenanceSoak soak = new MaintenanceSoak(dir);
    ObjectNode out = Json.object();
    ObjectNode config = out.putObject("config");
    config.put("seconds", seconds);
    config.put("interval_ms", intervalMs);
    config.put("maintain_seconds", maintainSeconds);
    config.put("append_rows_per_segment", appendRows);
    config.put("entity_ops_per_segment", entityOps);
    config.put("entity_keys", entityKeys);
    config.put("maintenance", maintenance);
    config.put("cpus", Runtime.getRuntime().availableProcessors());
    try {
      soak.run(out, seconds, intervalMs, maintainSeconds, sampleSeconds, appendRows, entityOps, entityKeys,
          maintenance);
    } finally {
      soak.catalog.close();
      soak.tombstones.close();
      soak.duckdb.close();
      soak.allocator.close();
      try (Stream<Path> paths = Files.walk(dir)) {
        paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    System.out.println(Json.toString(out));
  }

  private void run(ObjectNode out, long seconds, long intervalMs, long maintainSeconds, long sampleSeconds,
      int appendRows, int entityOps, int entityKeys, boolean maintenance) throws Exception {
    Table events = catalog.buildTable(TableIdentifier.of("soak", "events"), EVENTS)
        .withPartitionSpec(PartitionSpec.builderFor(EVENTS).identity("cat").build())
        .withProperty("format-version", "3").create();
    Table entity = catalog.buildTable(TableIdentifier.of("soak", "entity"), ENTITY)
        .withProperty("format-version", "3")
        .withProperty(TableProperties.MODE, TableProperties.MODE_ENTITY)
        .withProperty(TableProperties.VERSION_COLUMN, "ver").create();
    TableWal eventsWal = register(events, "events");
    TableWal entityWal = register(entity, "entity");

    AtomicBoolean stop = new AtomicBoolean();
    AtomicBoolean captureLineage = new AtomicBoolean();
    java.util.concurrent.atomic.AtomicReference<Map<Long, Long>> lineage = new java.util.concurrent.atomic.AtomicReference<>();
    AtomicLong commits = new AtomicLong();
    AtomicLong reconcileFailures = new AtomicLong();
    List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    Thread writer = new Thread(() -> {
      try {
        while (!stop.get()) {
          long started = System.nanoTime();
          appendSegment(eventsWal, appendRows);
          entitySegment(entityWal, entityOps, entityKeys);
          for (TableWal tw : List.of(eventsWal, entityWal)) {
            ReconcileResult r = reconcileWithRetry(tw);
            if (r.outcome() == ReconcileResult.Outcome.COMMITTED) {
              commits.incrementAndGet();
            } else if (r.outcome() == ReconcileResult.Outcome.FAILED) {
              reconcileFailures.incrementAndGet();
            }
          }
          // Row ids are captured here, between passes, when every written op is reconciled:
          // from then on, a key not deleted must keep its id.
          if (captureLineage.get() && !reconciler.hasPending(entityWal)) {
            lineage.set(rowIds(entity));
            deletedSinceLineage.clear();
            captureLineage.set(false);
          }
          long sleep = intervalMs - (System.nanoTime() - started) / 1_000_000;
          if (sleep > 0) {
            Thread.sleep(sleep);
          }
        }
      } catch (Throwable t) {
        failures.add(t);
      }
    }, "soak-writer");
    MaintenanceTotals totals = new MaintenanceTotals();
    Thread maintain = new Thread(() -> {
      try {
        while (!stop.get()) {
          long wakeAt = System.nanoTime() + maintainSeconds * 1_000_000_000L;
          while (!stop.get() && System.nanoTime() < wakeAt) {
            Thread.sleep(50);
          }
          if (stop.get()) {
            break;
          }
          for (MaintenanceResult r : maintainer.maintainAll(CATALOG)) {
            totals.add(r);
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (Throwable t) {
        failures.add(t);
      }
    }, "soak-maintenance");

    ArrayNode samples = out.putArray("samples");
    long start = System.nanoTime();
    writer.start();
    if (maintenance) {
      maintain.start();
    }
    long nextSample = sampleSeconds;
    while (true) {
      long elapsed = (System.nanoTime() - start) / 1_000_000_000L;
      if (elapsed >= seconds || !failures.isEmpty()) {
        break;
      }
      if (elapsed >= nextSample) {
        ObjectNode s = samples.addObject();
        s.put("t", elapsed);
        s.put("commits", commits.get());
        s.set("events", tableSample(events, eventsWal, true));
        s.set("entity", tableSample(entity, entityWal, false));
        if (lineage.get() == null && elapsed >= seconds / 3) {
          captureLineage.set(true);
        }
        nextSample += sampleSeconds;
      }
      Thread.sleep(200);
    }
    stop.set(true);
    writer.join();
    maintain.join();
    if (!failures.isEmpty()) {
      failures.get(0).printStackTrace();
      out.put("failure", failures.get(0).toString());
      return;
    }

    // Drain the WAL, run maintenance once more, and check every row.
    while (reconciler.reconcile(eventsWal).outcome() == ReconcileResult.Outcome.COMMITTED
        || reconciler.reconcile(entityWal).outcome() == ReconcileResult.Outcome.COMMITTED) {
      commits.incrementAndGet();
    }
    if (maintenance) {
      maintainer.maintainAll(CATALOG).forEach(totals::add);
    }
    ObjectNode last = samples.addObject();
    last.put("t", (System.nanoTime() - start) / 1_000_000_000L);
    last.put("commits", commits.get());
    last.set("events", tableSample(events, eventsWal, true));
    last.set("entity", tableSample(entity, entityWal, false));
    out.put("reconcile_commits", commits.get());
    out.put("reconcile_failures", reconcileFailures.get());
    out.set("maintenance", totals.toJson());
    out.set("check", check(events, entity, lineage.get()));
  }

  /** One pass; a failed pass (e.g. commits kept conflicting) is counted, the next one retries. */
  private ReconcileResult reconcileWithRetry(TableWal tw) {
    try {
      return reconciler.reconcile(tw);
    } catch (RuntimeException e) {
      return new ReconcileResult(tw, null, ReconcileResult.Outcome.FAILED, 0, 0, 0, 0, 0, 0, 0, 1, e.getMessage());
    }
  }

  private TableWal register(Table table, String name) {
    TableWal tw = new TableWal(CATALOG, table.uuid());
    wal.registerTableName(tw, new TableName(List.of("soak"), name));
    return tw;
  }

  private void appendSegment(TableWal tw, int rows) {
    long first = nextId;
    nextId += rows;
    try (VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(EVENTS), allocator)) {
      BigIntVector id = (BigIntVector) root.getVector("id");
      VarCharVector cat = (VarCharVector) root.getVector("cat");
      IntVector v = (IntVector) root.getVector("v");
      id.allocateNew(rows);
      cat.allocateNew(rows * 4L, rows);
      v.allocateNew(rows);
      for (int i = 0; i < rows; i++) {
        id.set(i, first + i);
        cat.setSafe(i, ("c" + ((first + i) % 4)).getBytes(StandardCharsets.UTF_8));
        v.set(i, (int) ((first + i) * 31 % 1000));
      }
      root.setRowCount(rows);
      wal.append(tw, List.of(frame(root, WalOperation.UPSERT, EVENTS, rows)));
    }
  }

  private void entitySegment(TableWal tw, int ops, int keys) {
    List<long[]> upserts = new ArrayList<>();
    List<long[]> deletes = new ArrayList<>();
    for (int i = 0; i < ops; i++) {
      long key = rnd.nextInt(keys);
      long version = nextVersion++;
      if (rnd.nextInt(10) == 0) {
        deletes.add(new long[] {key, version});
        entityModel.remove(key);
        deletedSinceLineage.add(key);
      } else {
        upserts.add(new long[] {key, version});
        entityModel.put(key, new Object[] {version, "a" + version, (int) (version % 1000)});
      }
    }
    List<WalFrame> frames = new ArrayList<>();
    frames.add(entityFrame(upserts, false));
    if (!deletes.isEmpty()) {
      frames.add(entityFrame(deletes, true));
    }
    wal.append(tw, frames);
  }

  private WalFrame entityFrame(List<long[]> ops, boolean delete) {
    Schema schema = delete ? ENTITY.select("id", "ver") : ENTITY;
    try (VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(schema), allocator)) {
      int n = ops.size();
      BigIntVector id = (BigIntVector) root.getVector("id");
      BigIntVector ver = (BigIntVector) root.getVector("ver");
      id.allocateNew(n);
      ver.allocateNew(n);
      VarCharVector a = delete ? null : (VarCharVector) root.getVector("a");
      IntVector b = delete ? null : (IntVector) root.getVector("b");
      if (!delete) {
        a.allocateNew(n * 8L, n);
        b.allocateNew(n);
      }
      for (int i = 0; i < n; i++) {
        long version = ops.get(i)[1];
        id.set(i, ops.get(i)[0]);
        ver.set(i, version);
        if (!delete) {
          a.setSafe(i, ("a" + version).getBytes(StandardCharsets.UTF_8));
          b.set(i, (int) (version % 1000));
        }
      }
      root.setRowCount(n);
      return frame(root, delete ? WalOperation.DELETE : WalOperation.UPSERT, schema, n);
    }
  }

  private static WalFrame frame(VectorSchemaRoot root, WalOperation op, Schema schema, int rows) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, Channels.newChannel(bytes))) {
      writer.start();
      writer.writeBatch();
      writer.end();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new WalFrame(op, schema.schemaId(), new long[] {1}, rows, bytes.toByteArray());
  }

  private ObjectNode tableSample(Table table, TableWal tw, boolean append) throws IOException {
    table.refresh();
    Snapshot current = table.currentSnapshot();
    ObjectNode n = Json.object();
    n.put("data_files", Long.parseLong(current.summary().getOrDefault("total-data-files", "0")));
    n.put("delete_files", Long.parseLong(current.summary().getOrDefault("total-delete-files", "0")));
    n.put("rows", Long.parseLong(current.summary().getOrDefault("total-records", "0")));
    n.put("manifests", current.allManifests(table.io()).size());
    int snapshots = 0;
    for (Snapshot ignored : table.snapshots()) {
      snapshots++;
    }
    n.put("snapshots", snapshots);
    try (Stream<Path> files = Files.walk(Path.of(java.net.URI.create(table.location())))) {
      n.put("files_on_disk", files.filter(Files::isRegularFile).filter(p -> !p.getFileName().toString().endsWith(".crc"))
          .count());
    }
    n.put("wal_segments", wal.segmentsAfter(tw, 0).size());
    long t0 = System.nanoTime();
    int planned = 0;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask ignored : tasks) {
        planned++;
      }
    }
    n.put("plan_ms", round((System.nanoTime() - t0) / 1e6));
    long t1 = System.nanoTime();
    long rows = 0;
    try (CloseableIterable<Record> it = append
        ? IcebergGenerics.read(table).where(Expressions.equal("id", Math.max(0, nextId / 2))).build()
        : IcebergGenerics.read(table).build()) {
      for (Record ignored : it) {
        rows++;
      }
    }
    n.put(append ? "point_query_ms" : "full_scan_ms", round((System.nanoTime() - t1) / 1e6));
    n.put(append ? "point_query_rows" : "full_scan_rows", rows);
    return n;
  }

  private Map<Long, Long> rowIds(Table table) throws IOException {
    table.refresh();
    Schema projection = TypeUtil.join(table.schema(), new Schema(MetadataColumns.ROW_ID));
    Map<Long, Long> ids = new HashMap<>();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).project(projection).build()) {
      for (Record r : rows) {
        ids.put((Long) r.getField("id"), (Long) r.getField(MetadataColumns.ROW_ID.name()));
      }
    }
    return ids;
  }

  private ObjectNode check(Table events, Table entity, Map<Long, Long> lineage) throws IOException {
    ObjectNode n = Json.object();
    events.refresh();
    Set<Long> ids = new HashSet<>();
    long duplicates = 0;
    long outOfRange = 0;
    try (CloseableIterable<Record> rows = IcebergGenerics.read(events).build()) {
      for (Record r : rows) {
        long id = (Long) r.getField("id");
        if (!ids.add(id)) {
          duplicates++;
        }
        if (id < 0 || id >= nextId) {
          outOfRange++;
        }
      }
    }
    n.put("append_rows_expected", nextId);
    n.put("append_rows", ids.size());
    n.put("append_duplicates", duplicates);
    boolean appendOk = ids.size() == nextId && duplicates == 0 && outOfRange == 0;

    entity.refresh();
    Schema projection = TypeUtil.join(entity.schema(), new Schema(MetadataColumns.ROW_ID));
    Map<Long, Object[]> actual = new HashMap<>();
    Map<Long, Long> rowIds = new HashMap<>();
    long entityDuplicates = 0;
    try (CloseableIterable<Record> rows = IcebergGenerics.read(entity).project(projection).build()) {
      for (Record r : rows) {
        long id = (Long) r.getField("id");
        if (actual.put(id, new Object[] {r.getField("ver"), r.getField("a"), r.getField("b")}) != null) {
          entityDuplicates++;
        }
        rowIds.put(id, (Long) r.getField(MetadataColumns.ROW_ID.name()));
      }
    }
    long mismatches = 0;
    for (Map.Entry<Long, Object[]> e : entityModel.entrySet()) {
      Object[] got = actual.get(e.getKey());
      if (got == null || !java.util.Arrays.equals(got, e.getValue())) {
        mismatches++;
      }
    }
    mismatches += actual.keySet().stream().filter(k -> !entityModel.containsKey(k)).count();
    long lineageChecked = 0;
    long lineageChanged = 0;
    if (lineage != null) {
      for (Map.Entry<Long, Long> e : lineage.entrySet()) {
        if (!deletedSinceLineage.contains(e.getKey()) && rowIds.containsKey(e.getKey())) {
          lineageChecked++;
          if (!e.getValue().equals(rowIds.get(e.getKey()))) {
            lineageChanged++;
          }
        }
      }
    }
    n.put("entity_rows_expected", entityModel.size());
    n.put("entity_rows", actual.size());
    n.put("entity_duplicates", entityDuplicates);
    n.put("entity_mismatches", mismatches);
    n.put("entity_row_ids_checked", lineageChecked);
    n.put("entity_row_ids_changed", lineageChanged);
    n.put("ok", appendOk && entityDuplicates == 0 && mismatches == 0 && lineageChanged == 0);
    return n;
  }

  private static double round(double ms) {
    return Math.round(ms * 10) / 10.0;
  }

  /** Sums of what maintenance did over the run. */
  private static final class MaintenanceTotals {
    long passes;
    long groups;
    long filesRemoved;
    long filesAdded;
    long vectorsFolded;
    long conflicts;
    long snapshotsExpired;
    long orphans;
    long walSegments;
    long manifestRewrites;
    long errors;
    long maxMillis;
    long totalMillis;

    synchronized void add(MaintenanceResult r) {
      passes++;
      groups += r.compaction().groups();
      filesRemoved += r.compaction().dataFilesRemoved();
      filesAdded += r.compaction().dataFilesAdded();
      vectorsFolded += r.compaction().deleteVectorsFolded();
      conflicts += r.compaction().conflicts();
      snapshotsExpired += r.snapshotsExpired();
      orphans += r.orphanFilesDeleted();
      walSegments += r.walSegmentsDeleted();
      manifestRewrites += r.manifestsAfter() != r.manifestsBefore() ? 1 : 0;
      errors += r.errors().size();
      maxMillis = Math.max(maxMillis, r.millis());
      totalMillis += r.millis();
    }

    synchronized ObjectNode toJson() {
      ObjectNode n = Json.object();
      n.put("table_passes", passes);
      n.put("compaction_groups", groups);
      n.put("data_files_removed", filesRemoved);
      n.put("data_files_added", filesAdded);
      n.put("deletion_vectors_folded", vectorsFolded);
      n.put("compaction_conflicts", conflicts);
      n.put("snapshots_expired", snapshotsExpired);
      n.put("orphan_files_deleted", orphans);
      n.put("wal_segments_deleted", walSegments);
      n.put("manifest_rewrites", manifestRewrites);
      n.put("step_errors", errors);
      n.put("pass_ms_max", maxMillis);
      n.put("pass_ms_avg", passes == 0 ? 0 : totalMillis / passes);
      return n;
    }
  }
}
