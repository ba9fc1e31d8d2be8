package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.query.PendingWal;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** {@code "t$wal"} lists what a real WAL holds after the table's published seq. */
class WalPendingSegmentsTest {
  @Test
  void listsTheSegmentsAfterThePublishedSeqWithWriterRowsAndBytes() {
    MemoryObjectStore store = new MemoryObjectStore();
    ObjectStoreWal writer = new ObjectStoreWal(store, "ingest-a");
    TableWal table = new TableWal("warehouse", UUID.randomUUID());
    WalFrame small = new WalFrame(WalOperation.UPSERT, 0, new long[] {1}, 3, new byte[100]);
    WalFrame large = new WalFrame(WalOperation.UPSERT, 0, new long[] {2}, 7, new byte[250]);
    java.time.Instant before = java.time.Instant.now();
    long first = writer.append(table, List.of(small));
    long second = writer.append(table, List.of(small, large));
    java.time.Instant after = java.time.Instant.now();
    WalPendingSegments pending = new WalPendingSegments(writer);

    assertThat(pending.pending("warehouse", table.tableUuid())).extracting(PendingWal.Segment::seq)
        .containsExactly(first, second);
    writer.advancePublished(table, first);
    List<PendingWal.Segment> left = pending.pending("warehouse", table.tableUuid());
    assertThat(left).hasSize(1);
    PendingWal.Segment segment = left.get(0);
    assertThat(segment.seq()).isEqualTo(second);
    assertThat(segment.writerId()).isEqualTo("ingest-a");
    assertThat(segment.frames()).isEqualTo(2);
    assertThat(segment.rows()).isEqualTo(10);
    assertThat(segment.bytes()).isEqualTo(350);
    assertThat(segment.publishedSeq()).isEqualTo(first);
    assertThat(segment.writtenAt()).as("when the store wrote it").isBetween(before, after);
    // Another tenant's table of the same UUID has no WAL here.
    assertThat(pending.pending("other", table.tableUuid())).isEmpty();
  }

  @Test
  void aSegmentOnTheFsStoreShowsWhenItWasWritten(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
    ObjectStoreWal writer = new ObjectStoreWal(new io.storageengine.objectstore.FsObjectStore(dir), "ingest-a");
    TableWal table = new TableWal("warehouse", UUID.randomUUID());
    java.time.Instant before = java.time.Instant.now().minusSeconds(2); // the file system's time precision
    writer.append(table, List.of(new WalFrame(WalOperation.UPSERT, 0, new long[] {1}, 3, new byte[100])));
    java.time.Instant after = java.time.Instant.now().plusSeconds(2);
    assertThat(new WalPendingSegments(writer).pending("warehouse", table.tableUuid()))
        .singleElement().extracting(PendingWal.Segment::writtenAt).isNotNull()
        .satisfies(written -> assertThat(written).isBetween(before, after));
  }
}
