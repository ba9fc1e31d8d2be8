package io.storageengine.stress;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.wal.WalOperation;
import java.util.Random;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** The verification rules of the two models, on hand-made read-backs (no server). */
class WorkloadModelTest {
  static final TableIdentifier TABLE = TableIdentifier.of("stress", "t");
  static final Schema APPEND = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "payload", Types.StringType.get()));
  static final Schema ENTITY = new Schema(
      Types.NestedField.required(1, "key", Types.LongType.get()),
      Types.NestedField.required(2, "version", Types.LongType.get()),
      Types.NestedField.optional(3, "payload", Types.StringType.get()));

  @Test
  void appendDemandsEverySentRowOnceAcknowledgedOrNotAndNothingUnsent() {
    AppendWorkload w = new AppendWorkload(TABLE, 1000, 8);
    PlannedBatch acked = w.plan(0, 3, new Random(1)).get(0);      // ids 1000..1002
    PlannedBatch unknown = w.plan(0, 2, new Random(1)).get(0);    // ids 1003..1004
    PlannedBatch neverSent = w.plan(0, 1, new Random(1)).get(0);  // id 1005
    w.sent(acked);
    w.acked(acked);
    w.sent(unknown);
    w.unknown(unknown);
    assertThat(neverSent.ids()).containsExactly(1005L);
    Payloads payloads = new Payloads(8);

    Workload.ReadBack good = w.newReadBack();
    for (long id : new long[] {1000, 1001, 1002, 1003, 1004, 7}) { // 7: another run's row
      good.add(appendRow(id, payloads.expected(id + ":")));
    }
    TableVerification ok = good.verify("iceberg");
    assertThat(ok.passed()).isTrue();
    assertThat(ok.expected()).isEqualTo(5);
    assertThat(ok.verified()).isEqualTo(5);
    assertThat(ok.unacknowledged()).isEqualTo(2);

    Workload.ReadBack lost = w.newReadBack();
    for (long id : new long[] {1000, 1001, 1002, 1003}) { // 1004: ack never came, not stored
      lost.add(appendRow(id, payloads.expected(id + ":")));
    }
    TableVerification vl = lost.verify("iceberg");
    assertThat(vl.passed()).isFalse();
    assertThat(vl.missing()).isEqualTo(1);
    assertThat(vl.problems()).containsExactly("id 1004: sent (ack never arrived) but missing");

    Workload.ReadBack bad = w.newReadBack();
    for (long id : new long[] {1000, 1000, 1002, 1003, 1003, 1004, 1005}) {
      bad.add(appendRow(id, payloads.expected(id + ":")));
    }
    bad.add(appendRow(1002, "tampered"));
    TableVerification failed = bad.verify("flight_sql");
    assertThat(failed.passed()).isFalse();
    assertThat(failed.missing()).isEqualTo(1);      // 1001
    assertThat(failed.duplicated()).isEqualTo(3);   // 1000, 1002 (tampered copy), 1003 (unacknowledged)
    assertThat(failed.wrong()).isEqualTo(2);        // 1005 never sent, tampered payload
    assertThat(failed.problems()).contains("id 1001: acknowledged but missing",
        "id 1005: present although never sent", "id 1000: present more than once",
        "id 1003: present more than once");
  }

  @Test
  void entityDemandsTheLastSentOperationOfEveryKeyAcknowledgedOrNot() {
    EntityWorkload w = new EntityWorkload(TABLE, 100, 10, 0, 0, 4);
    Payloads payloads = new Payloads(4);
    // key 1: upsert v100 acked, delete v101 unknown -> absent
    // key 2: upsert v102 acked, upsert v103 unknown -> v103
    // key 3: upsert v104 acked, delete v105 acked -> absent
    // key 4: upsert v107 unknown, upsert v106 acked (sent later, lower version) -> v107
    op(w, WalOperation.UPSERT, 1, 100, true);
    op(w, WalOperation.DELETE, 1, 101, false);
    op(w, WalOperation.UPSERT, 2, 102, true);
    op(w, WalOperation.UPSERT, 2, 103, false);
    op(w, WalOperation.UPSERT, 3, 104, true);
    op(w, WalOperation.DELETE, 3, 105, true);
    op(w, WalOperation.UPSERT, 4, 107, false);
    op(w, WalOperation.UPSERT, 4, 106, true);

    Workload.ReadBack a = w.newReadBack();
    a.add(entityRow(2, 103, payloads.expected("2:103:")));
    a.add(entityRow(4, 107, payloads.expected("4:107:")));
    TableVerification va = a.verify("iceberg");
    assertThat(va.passed()).isTrue();
    assertThat(va.verified()).isEqualTo(4);
    assertThat(va.unacknowledged()).isEqualTo(3); // keys 1, 2, 4

    Workload.ReadBack b = w.newReadBack();
    b.add(entityRow(1, 100, payloads.expected("1:100:")));        // the unacknowledged delete is lost
    b.add(entityRow(2, 102, payloads.expected("2:102:")));        // the unacknowledged upsert is lost
    b.add(entityRow(4, 106, payloads.expected("4:106:")));        // stale
    TableVerification vb = b.verify("iceberg");
    assertThat(vb.passed()).isFalse();
    assertThat(vb.wrong()).isEqualTo(3);
    assertThat(vb.problems()).contains("key 1: deleted at version 101 but shows version 100",
        "key 2: stale: shows version 102, last upsert 103");

    Workload.ReadBack c = w.newReadBack();
    c.add(entityRow(2, 101, payloads.expected("2:101:")));        // no such upsert of key 2
    c.add(entityRow(3, 104, payloads.expected("3:104:")));        // resurrected after a delete
    c.add(entityRow(4, 107, payloads.expected("4:107:")));
    TableVerification vc = c.verify("flight_sql");
    assertThat(vc.passed()).isFalse();
    assertThat(vc.wrong()).isEqualTo(2);
    assertThat(vc.problems()).contains("key 3: deleted at version 105 but shows version 104");

    EntityWorkload lost = new EntityWorkload(TABLE, 100, 10, 0, 0, 4);
    op(lost, WalOperation.UPSERT, 5, 100, false);
    Workload.ReadBack d = lost.newReadBack();
    TableVerification vd = d.verify("iceberg");
    assertThat(vd.missing()).isEqualTo(1);
    assertThat(vd.problems()).containsExactly("key 5: missing");
    d = lost.newReadBack();
    d.add(entityRow(5, 100, payloads.expected("5:100:")));
    d.add(entityRow(5, 100, payloads.expected("5:100:")));
    assertThat(d.verify("iceberg").duplicated()).isEqualTo(1);
  }

  @Test
  void entityPlansUniqueIncreasingVersionsWithinTheKeySpace() {
    EntityWorkload w = new EntityWorkload(TABLE, 500, 50, 0.5, 0.3, 4);
    Random random = new Random(7);
    long last = 499;
    int deletes = 0;
    for (int round = 0; round < 20; round++) {
      for (PlannedBatch b : w.plan(0, 40, random)) {
        assertThat(java.util.Arrays.stream(b.ids()).allMatch(k -> k >= 0 && k < 50)).isTrue();
        if (b.operation() == WalOperation.DELETE) {
          deletes += b.rows();
          assertThat(b.freshnessMark()).isEqualTo(-1);
        }
        for (long v : b.versions()) {
          assertThat(v).isGreaterThan(499);
        }
        last = Math.max(last, java.util.Arrays.stream(b.versions()).max().getAsLong());
      }
    }
    assertThat(last).isEqualTo(499 + 20 * 40);
    assertThat(deletes).isBetween(150, 330);
  }

  private static void op(EntityWorkload w, WalOperation op, long key, long version, boolean acked) {
    PlannedBatch b = new PlannedBatch(op, 0, new long[] {key}, new long[] {version},
        op == WalOperation.UPSERT ? version : -1, 0);
    w.sent(b);
    if (acked) {
      w.acked(b);
    } else {
      w.unknown(b);
    }
  }

  private static GenericRecord appendRow(long id, String payload) {
    GenericRecord r = GenericRecord.create(APPEND);
    r.setField("id", id);
    r.setField("payload", payload);
    return r;
  }

  private static GenericRecord entityRow(long key, long version, String payload) {
    GenericRecord r = GenericRecord.create(ENTITY);
    r.setField("key", key);
    r.setField("version", version);
    r.setField("payload", payload);
    return r;
  }
}
