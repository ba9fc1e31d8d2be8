package io.storageengine.stress.bench;

import io.storageengine.objectstore.ObjectStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

/**
 * Measures the storage alone, apart from ingestion: for one blob of the segment size, the
 * plain write of a file, its fsync, and a whole {@code putIfAbsent} of the store (which adds the
 * etag digest, the link and the directory fsync). Medians of a few rounds, in milliseconds.
 */
final class StoreProbe {
  private static final int ROUNDS = 3;
  private static final int CHUNK = 1 << 20;

  private StoreProbe() {}

  static Map<String, Object> run(ObjectStore store, Path scratchDir, int blobBytes)
      throws IOException {
    byte[] blob = new byte[blobBytes];
    new Random(42).nextBytes(blob); // incompressible, like real column data
    long[] write = new long[ROUNDS];
    long[] fsync = new long[ROUNDS];
    long[] put = new long[ROUNDS];
    for (int round = 0; round < ROUNDS; round++) {
      Path file = scratchDir.resolve("probe-" + round + ".bin");
      try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW,
          StandardOpenOption.WRITE)) {
        long start = System.nanoTime();
        for (int offset = 0; offset < blob.length; offset += CHUNK) {
          ByteBuffer chunk = ByteBuffer.wrap(blob, offset, Math.min(CHUNK, blob.length - offset));
          while (chunk.hasRemaining()) {
            channel.write(chunk);
          }
        }
        long written = System.nanoTime();
        channel.force(true);
        write[round] = written - start;
        fsync[round] = System.nanoTime() - written;
      } finally {
        Files.deleteIfExists(file);
      }
      String key = "probe/blob-" + round;
      long start = System.nanoTime();
      store.putIfAbsent(key, blob);
      put[round] = System.nanoTime() - start;
      store.delete(key);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("blob_bytes", blobBytes);
    out.put("write_ms", medianMillis(write));
    out.put("fsync_ms", medianMillis(fsync));
    out.put("put_if_absent_ms", medianMillis(put));
    return out;
  }

  private static double medianMillis(long[] nanos) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    return Math.round(sorted[sorted.length / 2] / 1e5) / 10.0;
  }
}
