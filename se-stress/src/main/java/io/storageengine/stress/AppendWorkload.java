package io.storageengine.stress;

import io.storageengine.catalog.TableDefinition;
import io.storageengine.wal.WalOperation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Append table {@code (id bigint not null, producer int not null, payload string)}. Every row
 * gets a fresh id {@code base + n}; the model keeps one state byte per id (planned, sent,
 * acknowledged, unknown). Verification: every sent id exactly once, acknowledged or not (the
 * producers resend idempotently), nothing else of this run (ids outside the run's range belong
 * to other runs and are ignored).
 */
final class AppendWorkload implements Workload {
  static final Schema SCHEMA = new Schema(List.of(
      new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
      new Field("producer", FieldType.notNullable(new ArrowType.Int(32, true)), null),
      new Field("payload", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));

  private static final byte PLANNED = 0;
  private static final byte SENT = 1;
  private static final byte ACKED = 2;
  private static final byte UNKNOWN = 3;
  private static final int MAX_PROBLEMS = 10;

  private final TableIdentifier table;
  private final long base;
  private final Payloads payloads;
  private final AtomicLong next = new AtomicLong();
  private byte[] states = new byte[1 << 16];

  /** {@code base}: first row id of this run; runs use disjoint ranges. */
  AppendWorkload(TableIdentifier table, long base, int payloadBytes) {
    this.table = table;
    this.base = base;
    this.payloads = new Payloads(payloadBytes);
  }

  @Override
  public TableIdentifier table() {
    return table;
  }

  @Override
  public TableDefinition definition() {
    return TableDefinition.builder("id bigint not null, producer int not null, payload string").build();
  }

  @Override
  public List<WalOperation> operations() {
    return List.of(WalOperation.UPSERT);
  }

  @Override
  public Schema arrowSchema(WalOperation operation) {
    return SCHEMA;
  }

  @Override
  public List<PlannedBatch> plan(int producer, int rows, Random random) {
    long first = next.getAndAdd(rows);
    long[] ids = new long[rows];
    for (int i = 0; i < rows; i++) {
      ids[i] = base + first + i;
    }
    return List.of(new PlannedBatch(WalOperation.UPSERT, producer, ids, null, ids[rows - 1],
        (long) rows * payloadLength(ids[rows - 1])));
  }

  private int payloadLength(long id) {
    return payloads.expected(prefix(id)).length();
  }

  @Override
  public void fill(PlannedBatch batch, VectorSchemaRoot root) {
    BigIntVector id = (BigIntVector) root.getVector("id");
    IntVector producer = (IntVector) root.getVector("producer");
    VarCharVector payload = (VarCharVector) root.getVector("payload");
    root.allocateNew();
    long[] ids = batch.ids();
    for (int i = 0; i < ids.length; i++) {
      id.setSafe(i, ids[i]);
      producer.setSafe(i, batch.producer());
      payloads.write(payload, i, prefix(ids[i]));
    }
    root.setRowCount(ids.length);
  }

  private static String prefix(long id) {
    return id + ":";
  }

  @Override
  public void sent(PlannedBatch batch) {
    mark(batch, SENT);
  }

  @Override
  public void acked(PlannedBatch batch) {
    mark(batch, ACKED);
  }

  @Override
  public void unknown(PlannedBatch batch) {
    mark(batch, UNKNOWN);
  }

  private synchronized void mark(PlannedBatch batch, byte state) {
    for (long id : batch.ids()) {
      int index = Math.toIntExact(id - base);
      if (index >= states.length) {
        states = Arrays.copyOf(states, Math.max(index + 1, states.length * 2));
      }
      states[index] = state;
    }
  }

  @Override
  public String freshnessColumn() {
    return "id";
  }

  @Override
  public List<String> readBackColumns() {
    return List.of("id", "payload");
  }

  @Override
  public ReadBack newReadBack() {
    return new IdReadBack();
  }

  /** Collects ids (and checks payloads on the way); compares with the states at the end. */
  private final class IdReadBack implements ReadBack {
    private long[] ids = new long[1 << 12];
    private int size;
    private long badPayloads;
    private final List<String> problems = new ArrayList<>();

    @Override
    public void add(VectorSchemaRoot batch) {
      BigIntVector id = (BigIntVector) batch.getVector("id");
      VarCharVector payload = (VarCharVector) batch.getVector("payload");
      for (int i = 0; i < batch.getRowCount(); i++) {
        add(id.get(i), payload.isNull(i) ? null : new String(payload.get(i), java.nio.charset.StandardCharsets.UTF_8));
      }
    }

    @Override
    public void add(org.apache.iceberg.data.Record row) {
      Object payload = row.getField("payload");
      add((Long) row.getField("id"), payload == null ? null : payload.toString());
    }

    private void add(long id, String payload) {
      if (size == ids.length) {
        ids = Arrays.copyOf(ids, size * 2);
      }
      ids[size++] = id;
      long index = id - base;
      if (index >= 0 && index < next.get() && !payloads.expected(prefix(id)).equals(payload)) {
        badPayloads++;
        problem("id %d: payload differs from what was sent", id);
      }
    }

    private void problem(String format, Object... args) {
      if (problems.size() < MAX_PROBLEMS) {
        problems.add(String.format(format, args));
      }
    }

    @Override
    public TableVerification verify(String reader) {
      byte[] snapshot;
      long planned;
      synchronized (AppendWorkload.this) {
        planned = Math.min(next.get(), states.length);
        snapshot = Arrays.copyOf(states, (int) planned);
      }
      byte[] seen = new byte[snapshot.length];
      long duplicated = 0;
      long wrong = badPayloads;
      for (int i = 0; i < size; i++) {
        long index = ids[i] - base;
        if (index < 0 || index >= planned) {
          continue; // another run's row
        }
        int k = (int) index;
        if (seen[k] < 2) {
          seen[k]++;
        }
        if (seen[k] == 2) {
          duplicated++;
          seen[k] = 3; // count each duplicated id once
          problem("id %d: present more than once", ids[i]);
        }
      }
      long expected = 0;
      long verified = 0;
      long missing = 0;
      long unacknowledged = 0;
      for (int k = 0; k < snapshot.length; k++) {
        byte state = snapshot[k];
        byte count = seen[k];
        if (state == PLANNED) {
          if (count > 0) {
            wrong++;
            problem("id %d: present although never sent", base + k);
          }
          continue;
        }
        expected++;
        if (state != ACKED) {
          unacknowledged++;
        }
        if (count == 1) {
          verified++;
        } else if (count == 0) {
          missing++;
          problem("id %d: %s but missing", base + k,
              state == ACKED ? "acknowledged" : "sent (ack never arrived)");
        }
      }
      return new TableVerification(table.toString(), reader, size, expected, verified, missing,
          duplicated, wrong, unacknowledged, List.copyOf(problems));
    }
  }
}
