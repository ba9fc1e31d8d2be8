package io.storageengine.stress;

import io.storageengine.catalog.TableDefinition;
import io.storageengine.wal.WalOperation;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Entity table {@code (key bigint not null, version bigint not null, payload string)} with
 * primary key {@code key} and version column {@code version}. Every operation gets a version
 * that is unique and increasing in the run, so the state of a key is the operation with the
 * highest version among those applied, whatever order they arrived in.
 *
 * <p>The producers resend idempotently until every batch is acknowledged, so every sent
 * operation is applied exactly once, acknowledged or not. The model keeps per key the sent
 * operation with the highest version (and the highest acknowledged version, to count keys whose
 * last operation was never acknowledged). A key is verified when the table shows exactly that
 * operation's outcome: the row of that version for an upsert, no row for a delete; payloads are
 * recomputed from key and version.
 *
 * <p>Operations: with probability {@code deleteRatio} a delete of a key written before;
 * otherwise an upsert of a key written before (probability {@code updateRatio}) or of a new key
 * (until the key space is used up).
 */
final class EntityWorkload implements Workload {
  static final Schema UPSERT_SCHEMA = new Schema(List.of(
      new Field("key", FieldType.notNullable(new ArrowType.Int(64, true)), null),
      new Field("version", FieldType.notNullable(new ArrowType.Int(64, true)), null),
      new Field("payload", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));
  static final Schema DELETE_SCHEMA = new Schema(List.of(
      new Field("key", FieldType.notNullable(new ArrowType.Int(64, true)), null),
      new Field("version", FieldType.notNullable(new ArrowType.Int(64, true)), null)));
  private static final int MAX_PROBLEMS = 10;

  private final TableIdentifier table;
  private final long keySpace;
  private final double updateRatio;
  private final double deleteRatio;
  private final Payloads payloads;
  private final AtomicLong nextVersion;
  private final AtomicLong freshKeys = new AtomicLong();
  private final Map<Long, KeyState> keys = new ConcurrentHashMap<>();

  /** {@code versionBase}: first version of this run, above every version of earlier runs. */
  EntityWorkload(TableIdentifier table, long versionBase, long keySpace, double updateRatio,
      double deleteRatio, int payloadBytes) {
    this.table = table;
    this.keySpace = keySpace;
    this.updateRatio = updateRatio;
    this.deleteRatio = deleteRatio;
    this.payloads = new Payloads(payloadBytes);
    this.nextVersion = new AtomicLong(versionBase);
  }

  @Override
  public TableIdentifier table() {
    return table;
  }

  @Override
  public TableDefinition definition() {
    return TableDefinition.builder("key bigint not null, version bigint not null, payload string")
        .mode(TableDefinition.Mode.ENTITY).primaryKey("key").versionColumn("version").build();
  }

  @Override
  public List<WalOperation> operations() {
    return List.of(WalOperation.UPSERT, WalOperation.DELETE);
  }

  @Override
  public Schema arrowSchema(WalOperation operation) {
    return operation == WalOperation.DELETE ? DELETE_SCHEMA : UPSERT_SCHEMA;
  }

  @Override
  public List<PlannedBatch> plan(int producer, int rows, Random random) {
    long[] upKeys = new long[rows];
    long[] upVersions = new long[rows];
    long[] delKeys = new long[rows];
    long[] delVersions = new long[rows];
    int ups = 0;
    int dels = 0;
    long bytes = 0;
    for (int i = 0; i < rows; i++) {
      long written = Math.min(freshKeys.get(), keySpace);
      long version = nextVersion.getAndIncrement();
      if (written > 0 && random.nextDouble() < deleteRatio) {
        delKeys[dels] = (long) (random.nextDouble() * written);
        delVersions[dels++] = version;
        continue;
      }
      long key;
      if (written > 0 && (written >= keySpace || random.nextDouble() < updateRatio)) {
        key = (long) (random.nextDouble() * written);
      } else {
        key = freshKeys.getAndIncrement();
        if (key >= keySpace) {
          key = (long) (random.nextDouble() * keySpace);
        }
      }
      upKeys[ups] = key;
      upVersions[ups++] = version;
      bytes += payloads.expected(prefix(key, version)).length();
    }
    List<PlannedBatch> batches = new ArrayList<>(2);
    if (ups > 0) {
      long[] versions = Arrays.copyOf(upVersions, ups);
      batches.add(new PlannedBatch(WalOperation.UPSERT, producer, Arrays.copyOf(upKeys, ups),
          versions, Arrays.stream(versions).max().getAsLong(), bytes));
    }
    if (dels > 0) {
      batches.add(new PlannedBatch(WalOperation.DELETE, producer, Arrays.copyOf(delKeys, dels),
          Arrays.copyOf(delVersions, dels), -1, 0));
    }
    return batches;
  }

  private static String prefix(long key, long version) {
    return key + ":" + version + ":";
  }

  @Override
  public void fill(PlannedBatch batch, VectorSchemaRoot root) {
    BigIntVector key = (BigIntVector) root.getVector("key");
    BigIntVector version = (BigIntVector) root.getVector("version");
    VarCharVector payload = batch.operation() == WalOperation.UPSERT
        ? (VarCharVector) root.getVector("payload") : null;
    root.allocateNew();
    for (int i = 0; i < batch.rows(); i++) {
      key.setSafe(i, batch.ids()[i]);
      version.setSafe(i, batch.versions()[i]);
      if (payload != null) {
        payloads.write(payload, i, prefix(batch.ids()[i], batch.versions()[i]));
      }
    }
    root.setRowCount(batch.rows());
  }

  @Override
  public void sent(PlannedBatch batch) {
    boolean delete = batch.operation() == WalOperation.DELETE;
    for (int i = 0; i < batch.rows(); i++) {
      keys.computeIfAbsent(batch.ids()[i], k -> new KeyState()).sent(batch.versions()[i], delete);
    }
  }

  @Override
  public void acked(PlannedBatch batch) {
    for (int i = 0; i < batch.rows(); i++) {
      keys.get(batch.ids()[i]).acked(batch.versions()[i]);
    }
  }

  @Override
  public void unknown(PlannedBatch batch) {
    // Nothing to do: a sent operation is demanded whether or not its ack came.
  }

  @Override
  public String freshnessColumn() {
    return "version";
  }

  @Override
  public List<String> readBackColumns() {
    return List.of("key", "version", "payload");
  }

  @Override
  public ReadBack newReadBack() {
    return new KeyReadBack();
  }

  /** Per key: the sent operation with the highest version, and the highest acknowledged version. */
  private static final class KeyState {
    private long lastVersion = Long.MIN_VALUE;
    private boolean lastDelete;
    private long ackedVersion = Long.MIN_VALUE;

    synchronized void sent(long version, boolean delete) {
      if (version > lastVersion) {
        lastVersion = version;
        lastDelete = delete;
      }
    }

    synchronized void acked(long version) {
      ackedVersion = Math.max(ackedVersion, version);
    }

    /** Null when {@code row} (null: absent) is the outcome of the last operation; else what is wrong. */
    synchronized String check(Observed row) {
      if (row == null) {
        return lastDelete ? null : "missing";
      }
      if (lastDelete) {
        return "deleted at version " + lastVersion + " but shows version " + row.version;
      }
      if (row.version == lastVersion) {
        return null;
      }
      return row.version < lastVersion
          ? "stale: shows version " + row.version + ", last upsert " + lastVersion
          : "shows version " + row.version + ", which no sent upsert wrote";
    }

    /** Whether the last operation's ack never arrived. */
    synchronized boolean unacknowledged() {
      return ackedVersion < lastVersion;
    }
  }

  /** One row read back for a key; {@code count} above 1 is a duplicate. */
  private static final class Observed {
    long version;
    String payload;
    int count;
  }

  private final class KeyReadBack implements ReadBack {
    private final Map<Long, Observed> rows = new HashMap<>();
    private long read;

    @Override
    public void add(VectorSchemaRoot batch) {
      BigIntVector key = (BigIntVector) batch.getVector("key");
      BigIntVector version = (BigIntVector) batch.getVector("version");
      VarCharVector payload = (VarCharVector) batch.getVector("payload");
      for (int i = 0; i < batch.getRowCount(); i++) {
        add(key.get(i), version.get(i),
            payload.isNull(i) ? null : new String(payload.get(i), StandardCharsets.UTF_8));
      }
    }

    @Override
    public void add(org.apache.iceberg.data.Record row) {
      Object payload = row.getField("payload");
      add((Long) row.getField("key"), (Long) row.getField("version"),
          payload == null ? null : payload.toString());
    }

    private void add(long key, long version, String payload) {
      read++;
      Observed o = rows.computeIfAbsent(key, k -> new Observed());
      o.count++;
      if (o.count == 1 || version > o.version) {
        o.version = version;
        o.payload = payload;
      }
    }

    @Override
    public TableVerification verify(String reader) {
      List<String> problems = new ArrayList<>();
      long expected = 0;
      long verified = 0;
      long missing = 0;
      long duplicated = 0;
      long wrong = 0;
      long unacknowledged = 0;
      for (Map.Entry<Long, KeyState> e : keys.entrySet()) {
        long key = e.getKey();
        KeyState state = e.getValue();
        Observed row = rows.get(key);
        expected++;
        if (state.unacknowledged()) {
          unacknowledged++;
        }
        String problem = null;
        if (row != null && row.count > 1) {
          duplicated++;
          problem = "present " + row.count + " times";
        } else {
          problem = state.check(row);
          if (problem == null && row != null
              && !payloads.expected(prefix(key, row.version)).equals(row.payload)) {
            problem = "payload of version " + row.version + " differs from what was sent";
          }
          if (problem == null) {
            verified++;
          } else if (problem.equals("missing")) {
            missing++;
          } else {
            wrong++;
          }
        }
        if (problem != null && problems.size() < MAX_PROBLEMS) {
          problems.add("key " + key + ": " + problem);
        }
      }
      return new TableVerification(table.toString(), reader, read, expected, verified, missing,
          duplicated, wrong, unacknowledged, List.copyOf(problems));
    }
  }
}
