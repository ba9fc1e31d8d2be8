package io.storageengine.wal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.common.telemetry.EndedSpanListener;
import io.storageengine.common.telemetry.SpanFields;
import io.storageengine.common.telemetry.Telemetry;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.objectstore.TracingObjectStore;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What one reconcile tick lists at 1,000 tables with 50 WAL segments each, 10 of them with new
 * WAL: the entries returned by every listing, counted through the spans of a {@link
 * TracingObjectStore}, for a full sweep (every table) and for a normal tick (the marked tables).
 * Printed, not timed; the assertions pin only the shape of the cost (no discovery listing
 * returns a table's segments; a normal tick touches no unmarked table).
 */
class TableDiscoveryCostTest {
  private static final int TENANTS = 4;
  private static final int TABLES_PER_TENANT = 250;
  private static final int SEGMENTS_PER_TABLE = 50;
  /** Tables with segments after their published_seq; the others are reconciled up to date. */
  private static final int PENDING_TABLES = 10;

  private final AtomicLong listed = new AtomicLong();
  private final AtomicLong listings = new AtomicLong();
  private final Telemetry telemetry = Telemetry.builder().spanProcessor(new EndedSpanListener(span -> {
    Long count = span.getAttribute(SpanFields.IO_RESULT_COUNT);
    if (count != null) {
      listed.addAndGet(count);
      listings.incrementAndGet();
    }
  })).build();

  @AfterEach
  void close() {
    telemetry.close();
  }

  @Test
  void aTickListsTablesNotTheirSegments() {
    MemoryObjectStore memory = new MemoryObjectStore();
    List<TableWal> all = new ArrayList<>();
    for (int c = 0; c < TENANTS; c++) {
      for (int t = 0; t < TABLES_PER_TENANT; t++) {
        TableWal table = new TableWal("tenant-" + c, UUID.randomUUID());
        boolean pending = all.size() < PENDING_TABLES;
        // A day of WAL kept for retention: published (all but 5 when pending), not yet collected.
        long published = pending ? SEGMENTS_PER_TABLE - 5 : SEGMENTS_PER_TABLE;
        for (long seq = 1; seq <= SEGMENTS_PER_TABLE; seq++) {
          memory.put(table.segmentKey(seq), bytes("segment"));
        }
        memory.put(table.stateKey(), WalStateFile.toJson(new WalState(published, 0)));
        memory.put(table.tableNameKey(), bytes("{\"namespace\":[\"n\"],\"name\":\"t" + t + "\"}"));
        memory.put(table.tombstonePrefix() + "000/a.arrow", bytes("tombstone"));
        memory.put(table.tombstonePrefix() + "001/b.arrow", bytes("tombstone"));
        if (pending) {
          memory.put(table.pendingKey(), bytes("{}")); // as its last append left it
        }
        all.add(table);
      }
    }
    ObjectStore traced = new TracingObjectStore(memory, "cluster", telemetry);
    ObjectStoreWal wal = new ObjectStoreWal(traced, "cost-test");

    // What tables() listed before it went level by level: the whole tenants/ subtree.
    long wholeSubtree = memory.list("tenants/").size();

    listed.set(0);
    listings.set(0);
    List<TableWal> found = wal.tables(null);
    long discovery = listed.get();
    long discoveryListings = listings.get();

    // The rest of a tick (ReconcileLoop, Reconciler.reconcileAll, the worker sweep): per table
    // its state and the segments after published_seq.
    listed.set(0);
    listings.set(0);
    int pending = 0;
    for (TableWal table : found) {
      if (!wal.segmentsAfter(table, wal.state(table).publishedSeq()).isEmpty()) {
        pending++;
      }
    }
    long perTable = listed.get();

    // A normal tick (not a full sweep): the marked tables, then their pending checks.
    listed.set(0);
    listings.set(0);
    List<TableWal> marked = wal.pendingTables(null);
    int markedPending = 0;
    for (TableWal table : marked) {
      if (!wal.segmentsAfter(table, wal.state(table).publishedSeq()).isEmpty()) {
        markedPending++;
      }
    }
    long normalTick = listed.get();
    long normalTickListings = listings.get();

    System.out.printf("table discovery at %d tables x %d segments: before %d listed keys in 1 listing,"
            + " after %d listed entries in %d listings; pending checks of the tick list %d keys more;"
            + " a normal tick over the %d marked tables lists %d entries in %d listings%n",
        all.size(), SEGMENTS_PER_TABLE, wholeSubtree, discovery, discoveryListings, perTable,
        marked.size(), normalTick, normalTickListings);
    assertThat(marked).containsExactlyInAnyOrderElementsOf(all.subList(0, PENDING_TABLES));
    assertThat(markedPending).isEqualTo(PENDING_TABLES);
    // Tenants, markers, and the segments of the marked tables only: nothing per unmarked table.
    assertThat(normalTick).isEqualTo(TENANTS + PENDING_TABLES + (long) PENDING_TABLES * SEGMENTS_PER_TABLE);
    assertThat(normalTickListings).isEqualTo(1 + TENANTS + PENDING_TABLES);
    assertThat(found).containsExactlyInAnyOrderElementsOf(all);
    assertThat(pending).isEqualTo(PENDING_TABLES);
    // 1 + tenants + (tenant, table, and 4 entries of each table directory): no segment.
    assertThat(discovery).isEqualTo(TENANTS + (long) all.size() * (1 + 4));
    assertThat(discoveryListings).isEqualTo(1 + TENANTS + all.size());
    assertThat(wholeSubtree).isEqualTo((long) all.size() * (SEGMENTS_PER_TABLE + 4) + PENDING_TABLES);
  }

  private static byte[] bytes(String text) {
    return text.getBytes(UTF_8);
  }
}
