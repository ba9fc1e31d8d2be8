package io.storageengine.wal;

import static io.storageengine.testing.FaultInjectingObjectStore.Operation.GET;
import static io.storageengine.testing.FaultInjectingObjectStore.Operation.LIST;
import static io.storageengine.testing.FaultInjectingObjectStore.Operation.PUT;
import static io.storageengine.testing.FaultInjectingObjectStore.Operation.PUT_IF_ABSENT;
import static io.storageengine.testing.FaultInjectingObjectStore.Operation.PUT_IF_MATCH;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.testing.FaultInjectingObjectStore;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/** Single-writer behaviour of {@link ObjectStoreWal}: state, reads, GC, names, failures. */
class ObjectStoreWalTest {
  private final MemoryObjectStore memory = new MemoryObjectStore();
  private final FaultInjectingObjectStore store = new FaultInjectingObjectStore(memory);
  private final ObjectStoreWal wal = new ObjectStoreWal(store, "writer-a", 3, Duration.ofMillis(1));
  private final TableWal table = new TableWal("acme", UUID.randomUUID());

  @Test
  void appendsGetConsecutiveSeqsAndReadBackWithArrowRows() {
    try (BufferAllocator allocator = new RootAllocator()) {
      assertThat(wal.state(table)).isEqualTo(WalState.EMPTY);
      assertThat(wal.read(table, 1)).isEmpty();

      for (int i = 0; i < 3; i++) {
        byte[] ipc = ArrowPayloads.rows(allocator, i * 10L, 4);
        assertThat(wal.append(table, List.of(frame(i + 1, ipc)))).isEqualTo(i + 1);
      }

      assertThat(wal.segmentsAfter(table, 0)).containsExactly(1L, 2L, 3L);
      assertThat(wal.segmentsAfter(table, 2)).containsExactly(3L);
      WalSegment second = wal.read(table, 2).orElseThrow();
      assertThat(second.writerId()).isEqualTo("writer-a");
      assertThat(second.tableUuid()).isEqualTo(table.tableUuid());
      assertThat(second.frames().get(0).requestIds()).containsExactly(2L);
      assertThat(ArrowPayloads.read(allocator, second.frames().get(0).arrowIpc()).ids())
          .containsExactly(10L, 11L, 12L, 13L);
      assertThat(memory.get(table.segmentKey(2))).isPresent();
    }
  }

  @Test
  void existsTellsWhetherASegmentIsThereWithoutReadingIt() {
    wal.append(table, List.of(frame(1, bytes("a"))));
    store.failNext(GET, 10); // a read would fail: exists does not read
    assertThat(wal.exists(table, 1)).isTrue();
    assertThat(wal.exists(table, 2)).isFalse();
    assertThat(wal.exists(new TableWal("acme", UUID.randomUUID()), 1)).isFalse();
    assertThatThrownBy(() -> wal.read(table, 1)).isInstanceOf(SeException.class);
  }

  @Test
  void eachAppendHasItsOwnNonce() {
    wal.append(table, List.of(frame(1, bytes("a"))));
    wal.append(table, List.of(frame(2, bytes("b"))));
    assertThat(wal.read(table, 1).orElseThrow().writerNonce())
        .isNotEqualTo(wal.read(table, 2).orElseThrow().writerNonce());
  }

  @Test
  void appendStartsAbovePublishedSeq() {
    wal.advancePublished(table, 41);
    ObjectStoreWal fresh = new ObjectStoreWal(store, "writer-b");
    assertThat(fresh.append(table, List.of(frame(1, bytes("x"))))).isEqualTo(42);
  }

  @Test
  void appendSkipsSlotsTakenByOthers() {
    ObjectStoreWal other = new ObjectStoreWal(store, "writer-b");
    other.append(table, List.of(frame(1, bytes("b1"))));
    other.append(table, List.of(frame(2, bytes("b2"))));
    assertThat(wal.append(table, List.of(frame(3, bytes("a"))))).isEqualTo(3);
    // A slot holding garbage belongs to nobody; the writer moves past it.
    memory.put(table.segmentKey(4), bytes("not a segment"));
    assertThat(wal.append(table, List.of(frame(4, bytes("a"))))).isEqualTo(5);
  }

  @Test
  void lostResponseOfTheCreateIsRecognisedAndNotWrittenTwice() {
    store.loseResponseNext(PUT_IF_ABSENT, 1, key -> key.endsWith(".seg"));

    long seq = wal.append(table, List.of(frame(7, bytes("payload"))));

    assertThat(seq).isEqualTo(1);
    assertThat(wal.segmentsAfter(table, 0)).containsExactly(1L);
    assertThat(store.calls(PUT_IF_ABSENT)).isEqualTo(2);
    assertThat(wal.read(table, 1).orElseThrow().frames().get(0).arrowIpc())
        .isEqualTo(bytes("payload"));
    assertThat(wal.append(table, List.of(frame(8, bytes("next"))))).isEqualTo(2);
  }

  @Test
  void unavailableIsRetriedAFewTimesThenPropagates() {
    store.failNext(PUT_IF_ABSENT, 2);
    assertThat(wal.append(table, List.of(frame(1, bytes("a"))))).isEqualTo(1);

    store.failNext(PUT_IF_ABSENT, 3);
    String key = table.segmentKey(2);
    assertThatThrownBy(() -> wal.append(table, List.of(frame(2, bytes("b")))))
        .isInstanceOfSatisfying(SeException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE))
        .hasMessage("cannot create WAL segment " + key
            + " after 3 attempts: injected failure: PUT_IF_ABSENT '" + key + "' was not performed");
    assertThat(wal.segmentsAfter(table, 0)).containsExactly(1L);
  }

  @Test
  void outageFailsAppendsUntilItEnds() {
    wal.append(table, List.of(frame(1, bytes("before"))));
    store.startOutage();
    assertThatThrownBy(() -> wal.append(table, List.of(frame(2, bytes("during")))))
        .isInstanceOfSatisfying(SeException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE))
        .hasMessageStartingWith("cannot read " + table.stateKey() + " after 3 attempts: "
            + "injected outage");
    assertThatThrownBy(() -> wal.advancePublished(table, 1))
        .isInstanceOf(SeException.class)
        .hasMessageContaining("injected outage");
    store.endOutage();

    assertThat(wal.append(table, List.of(frame(3, bytes("after"))))).isEqualTo(2);
    assertThat(wal.read(table, 2).orElseThrow().frames().get(0).arrowIpc())
        .isEqualTo(bytes("after"));
  }

  @Test
  void advancePublishedNeverLowersAndCreatesStateOnFirstNeed() {
    assertThat(memory.get(table.stateKey())).isEmpty();
    wal.advancePublished(table, 5);
    assertThat(new String(memory.get(table.stateKey()).orElseThrow().data(), UTF_8))
        .isEqualTo("{\"published_seq\":5,\"gc_seq\":0}");
    wal.advancePublished(table, 3);
    wal.advancePublished(table, 5);
    assertThat(wal.state(table)).isEqualTo(new WalState(5, 0));
    assertThatThrownBy(() -> wal.advancePublished(table, -1))
        .isInstanceOf(SeException.class)
        .hasMessage("published seq must not be negative, got -1");
  }

  @Test
  void casSurvivesALostResponse() {
    wal.advancePublished(table, 1);
    store.loseResponseNext(PUT_IF_MATCH, 1);
    wal.advancePublished(table, 2);
    assertThat(wal.state(table)).isEqualTo(new WalState(2, 0));
  }

  @Test
  void collectGarbageRaisesGcSeqUpToPublishedThenDeletes() {
    for (int i = 1; i <= 5; i++) {
      wal.append(table, List.of(frame(i, bytes("s" + i))));
    }
    assertThat(wal.collectGarbage(table, 3)).isZero(); // nothing published yet
    assertThat(wal.state(table)).isEqualTo(WalState.EMPTY);

    wal.advancePublished(table, 3);
    assertThat(wal.collectGarbage(table, 10)).isEqualTo(3);
    assertThat(wal.state(table)).isEqualTo(new WalState(3, 3));
    assertThat(wal.segmentsAfter(table, 0)).containsExactly(4L, 5L);
    assertThat(wal.collectGarbage(table, 2)).isZero();
    assertThat(wal.state(table)).isEqualTo(new WalState(3, 3));
    // New appends go above the collected prefix.
    assertThat(new ObjectStoreWal(store, "writer-c").append(table, List.of(frame(9, bytes("x")))))
        .isEqualTo(6);
  }

  @Test
  void corruptStateIsReportedWithItsKey() {
    memory.put(table.stateKey(), bytes("{\"published_seq\":1,\"gc_seq\":2}"));
    assertThatThrownBy(() -> wal.state(table))
        .isInstanceOfSatisfying(SeException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL))
        .hasMessage("corrupt WAL state " + table.stateKey() + ": gc_seq 2 is above published_seq 1");
    memory.put(table.stateKey(), bytes("{\"published_seq\":1,\"gc_seq\":0,\"x\":1}"));
    assertThatThrownBy(() -> wal.state(table))
        .isInstanceOf(SeException.class)
        .hasMessage("corrupt WAL state " + table.stateKey() + ": unknown field 'x'");
    memory.put(table.stateKey(), bytes("{\"published_seq\":\"1\",\"gc_seq\":0}"));
    assertThatThrownBy(() -> wal.state(table))
        .isInstanceOf(SeException.class)
        .hasMessage("corrupt WAL state " + table.stateKey()
            + ": 'published_seq' must be a non-negative integer");
  }

  @Test
  void segmentOfAnotherTableIsCorrupt() {
    TableWal other = new TableWal("acme", UUID.randomUUID());
    wal.append(other, List.of(frame(1, bytes("x"))));
    memory.put(table.segmentKey(1), memory.get(other.segmentKey(1)).orElseThrow().data());
    assertThatThrownBy(() -> wal.read(table, 1))
        .isInstanceOf(SeException.class)
        .hasMessage("corrupt WAL segment " + table.segmentKey(1) + ": written for table "
            + other.tableUuid());
  }

  @Test
  void tableNameIsKeptNextToTheWalAndWrittenOnlyWhenChanged() {
    assertThat(wal.tableName(table)).isEmpty();
    TableName name = new TableName(List.of("sales", "eu"), "orders");
    wal.registerTableName(table, name);
    wal.registerTableName(table, new TableName(List.of("sales", "eu"), "orders"));
    assertThat(store.calls(PUT)).isEqualTo(1);
    assertThat(new String(memory.get(table.tableNameKey()).orElseThrow().data(), UTF_8))
        .isEqualTo("{\"namespace\":[\"sales\",\"eu\"],\"name\":\"orders\"}");
    assertThat(wal.tableName(table)).contains(name);

    TableName renamed = new TableName(List.of("sales"), "orders_v2");
    wal.registerTableName(table, renamed);
    assertThat(wal.tableName(table)).contains(renamed);
    assertThatThrownBy(() -> wal.registerTableName(table, new TableName(List.of("a"), "")))
        .isInstanceOf(SeException.class)
        .hasMessageStartingWith("table name needs a namespace and a non-empty name");
  }

  @Test
  void tablesAreThoseWithStateOrSegments() {
    TableWal withSegment = new TableWal("acme", UUID.randomUUID());
    TableWal withState = new TableWal("acme", UUID.randomUUID());
    TableWal nameOnly = new TableWal("acme", UUID.randomUUID());
    TableWal otherTenant = new TableWal("globex", UUID.randomUUID());
    wal.advancePublished(withState, 0); // no change: state.json is not created
    assertThat(wal.tables("acme")).isEmpty();
    wal.append(withSegment, List.of(frame(1, bytes("x"))));
    wal.advancePublished(withState, 1);
    wal.registerTableName(nameOnly, new TableName(List.of("n"), "t"));
    wal.append(otherTenant, List.of(frame(1, bytes("y"))));
    memory.put("tenants/acme/tables/not-a-uuid/state.json", bytes("{}"));
    memory.put(nameOnly.tombstonePrefix() + "000/t.arrow", bytes("t"));
    memory.put("tenants/Bad Id/tables/" + UUID.randomUUID() + "/state.json", bytes("{}"));
    store.resetCounters();

    assertThat(wal.tables("acme")).containsExactlyInAnyOrder(withSegment, withState);
    assertThat(wal.tables(null)).containsExactlyInAnyOrder(withSegment, withState, otherTenant);
    assertThat(wal.tables("initech")).isEmpty();
    // Found level by level: no listing of a whole subtree (every segment of every table).
    assertThat(store.calls(LIST)).isZero();
    wal.deleteTable(withSegment);
    assertThat(wal.tables("acme")).containsExactly(withState);
    assertThatThrownBy(() -> wal.tables("Bad Id"))
        .isInstanceOf(SeException.class)
        .hasMessageStartingWith("invalid catalog id 'Bad Id'");
  }

  @Test
  void appendPutsThePendingMarkerAfterItsSegment() {
    List<Boolean> segmentFirst = new java.util.ArrayList<>();
    try (var hook = store.before(PUT, k -> k.equals(table.pendingKey()),
        (op, k) -> segmentFirst.add(memory.head(table.segmentKey(1)).isPresent()))) {
      wal.append(table, List.of(frame(1, bytes("a"))));
    }
    assertThat(segmentFirst).containsExactly(true);
    assertThat(memory.head(table.pendingKey())).isPresent();
    assertThat(table.pendingKey()).isEqualTo("tenants/acme/pending/" + table.tableUuid());
  }

  @Test
  void aFailedMarkerPutDoesNotFailTheDurableAppend() {
    store.failNext(PUT, 3, k -> k.equals(table.pendingKey()));
    assertThat(wal.append(table, List.of(frame(1, bytes("a"))))).isEqualTo(1);
    // Like a crash between segment and marker: only the full sweep over tables() finds it.
    assertThat(wal.pendingTables("acme")).isEmpty();
    assertThat(wal.tables("acme")).containsExactly(table);
    wal.markPending(table);
    assertThat(wal.pendingTables("acme")).containsExactly(table);
  }

  @Test
  void pendingTablesAreThoseWithAMarkerFoundPerTenant() {
    TableWal published = new TableWal("acme", UUID.randomUUID());
    TableWal otherTenant = new TableWal("globex", UUID.randomUUID());
    wal.append(table, List.of(frame(1, bytes("x"))));
    wal.append(published, List.of(frame(1, bytes("y"))));
    wal.advancePublished(published, 1);
    assertThat(wal.clearPending(published)).isFalse();
    wal.append(otherTenant, List.of(frame(1, bytes("z"))));
    memory.put(TableWal.pendingPrefix("acme") + "not-a-uuid", bytes("{}"));
    store.resetCounters();

    assertThat(wal.pendingTables("acme")).containsExactly(table);
    assertThat(wal.pendingTables(null)).containsExactlyInAnyOrder(table, otherTenant);
    assertThat(wal.pendingTables("initech")).isEmpty();
    // One listing of tenants/ and one per tenant: none of a table directory or of segments.
    assertThat(store.calls(LIST)).isZero();
    assertThat(store.calls(FaultInjectingObjectStore.Operation.LIST_CHILDREN)).isEqualTo(1 + 1 + 2 + 1);
  }

  @Test
  void clearPendingDeletesTheMarkerOnlyWhenNothingIsPending() {
    wal.append(table, List.of(frame(1, bytes("a"))));
    wal.append(table, List.of(frame(2, bytes("b"))));
    wal.advancePublished(table, 1);
    assertThat(wal.clearPending(table)).isTrue();
    assertThat(memory.head(table.pendingKey())).isPresent();
    wal.advancePublished(table, 2);
    assertThat(wal.clearPending(table)).isFalse();
    assertThat(memory.head(table.pendingKey())).isEmpty();
    assertThat(wal.pendingTables("acme")).isEmpty();
    assertThat(wal.clearPending(table)).isFalse(); // no marker: deleting it again is harmless
  }

  @Test
  void clearPendingKeepsTheMarkerOfASegmentLandingBetweenDeleteAndRelist() {
    ObjectStoreWal other = new ObjectStoreWal(memory, "writer-b");
    wal.append(table, List.of(frame(1, bytes("a"))));
    wal.advancePublished(table, 1);

    // The writer's marker put follows the delete: its own marker stays.
    try (var hook = store.after(FaultInjectingObjectStore.Operation.DELETE,
        k -> k.equals(table.pendingKey()), (op, k) -> other.append(table, List.of(frame(2, bytes("b")))))) {
      assertThat(wal.clearPending(table)).isTrue();
    }
    assertThat(memory.head(table.pendingKey())).isPresent();

    // The writer's marker put preceded the delete (its segment landed before the re-list):
    // clearPending puts the marker back.
    wal.advancePublished(table, 2);
    try (var hook = store.after(FaultInjectingObjectStore.Operation.DELETE,
        k -> k.equals(table.pendingKey()), (op, k) -> {
          other.append(table, List.of(frame(3, bytes("c"))));
          memory.delete(table.pendingKey());
        })) {
      assertThat(wal.clearPending(table)).isTrue();
    }
    assertThat(memory.head(table.pendingKey())).isPresent();
    assertThat(wal.pendingTables("acme")).containsExactly(table);
  }

  @Test
  void deleteTableDeletesItsMarker() {
    wal.append(table, List.of(frame(1, bytes("a"))));
    assertThat(wal.pendingTables("acme")).containsExactly(table);
    wal.deleteTable(table);
    assertThat(memory.head(table.pendingKey())).isEmpty();
    assertThat(memory.list("tenants/")).isEmpty();
  }

  @Test
  void writerIdMustFitTheHeader() {
    assertThatThrownBy(() -> new ObjectStoreWal(memory, ""))
        .isInstanceOf(SeException.class)
        .hasMessage("writer id '' must be 1 to 255 UTF-8 bytes long");
  }

  static WalFrame frame(long requestId, byte[] ipc) {
    return new WalFrame(WalOperation.UPSERT, 0, new long[] {requestId}, 1, ipc);
  }

  static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }
}
