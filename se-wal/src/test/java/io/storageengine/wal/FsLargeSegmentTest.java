package io.storageengine.wal;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.objectstore.FsObjectStore;
import io.storageengine.objectstore.ObjectStore;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Segments of several MiB on the fs store, which writes blobs of a MiB and more another way
 * (digest aside, O_DIRECT where the file system allows it, last block padded then truncated):
 * what is read back is byte for byte what was appended, and every etag is the MD5 of it.
 */
class FsLargeSegmentTest {
  @TempDir Path dir;

  @Test
  void largeSegmentsRoundTripWithExactSizeAndMd5Etags() throws Exception {
    TableWal table = new TableWal("tenant", UUID.randomUUID());
    Random random = new Random(7);
    try (ObjectStore store = new FsObjectStore(dir)) {
      ObjectStoreWal wal = new ObjectStoreWal(store, "writer-1");
      // Sizes around the chunk and block boundaries: just below, exactly at and just above
      // a MiB, and several MiB with an odd tail.
      int[][] frameSizes = {{(1 << 20) - 200}, {(1 << 20) - 63}, {1 << 20, 1}, {3 << 20, 777_777}};
      for (int[] sizes : frameSizes) {
        List<WalFrame> frames = new java.util.ArrayList<>();
        for (int size : sizes) {
          byte[] ipc = new byte[size];
          random.nextBytes(ipc);
          frames.add(new WalFrame(WalOperation.UPSERT, 3, new long[] {frames.size() + 1L}, 5, ipc));
        }
        long seq = wal.append(table, frames);

        WalSegment segment = wal.read(table, seq).orElseThrow();
        assertThat(segment.frames()).hasSize(frames.size());
        for (int i = 0; i < frames.size(); i++) {
          assertThat(segment.frames().get(i).arrowIpc()).isEqualTo(frames.get(i).arrowIpc());
        }
        String key = table.segmentKey(seq);
        ObjectStore.Blob blob = store.get(key).orElseThrow();
        assertThat(blob.etag()).isEqualTo(md5(blob.data()));
        ObjectStore.ObjectInfo info = store.head(key).orElseThrow();
        assertThat(info.size()).isEqualTo(blob.data().length);
        assertThat(info.etag()).isEqualTo(blob.etag());
      }
      assertThat(wal.segmentsAfter(table, 0)).containsExactly(1L, 2L, 3L, 4L);

      // Every put path returns the same etag the reads report.
      byte[] large = new byte[(2 << 20) + 5];
      random.nextBytes(large);
      assertThat(store.putIfAbsent("blobs/a", large)).contains(md5(large));
      assertThat(store.putIfAbsent("blobs/a", large)).isEmpty();
      String etag = store.put("blobs/b", large);
      assertThat(etag).isEqualTo(md5(large));
      byte[] replacement = new byte[(1 << 20) + 4096];
      random.nextBytes(replacement);
      assertThat(store.putIfMatch("blobs/b", replacement, etag)).contains(md5(replacement));
      assertThat(store.get("blobs/b").orElseThrow().data()).isEqualTo(replacement);
      assertThat(store.head("blobs/b").orElseThrow().size()).isEqualTo(replacement.length);
    }
  }

  private static String md5(byte[] data) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(data));
  }
}
