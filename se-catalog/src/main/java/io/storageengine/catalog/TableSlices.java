package io.storageengine.catalog;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * The slices of a sliced entity table (ARCHITECTURE.md 9.1): what a slice is, how a key and a
 * data file are assigned to one, and where a slice's WAL progress is recorded.
 *
 * <ul>
 *   <li>A key's <b>slice hash</b> is the first four bytes, unsigned big-endian, of the MD5
 *       digest of the key's canonical text (the key columns cast to VARCHAR by DuckDB, joined
 *       with U+001F: the text tombstones use). A slice owns the half-open hash range
 *       {@code [lo, hi)} of {@code [0, 2^32)}; the slices of a table cover it without overlap.
 *       {@code se.slice.count = N} starts with N equal ranges ({@link #uniform}).</li>
 *   <li>A data file belongs to the slice whose id its file name starts with:
 *       {@code slice-<id>-<name>.parquet} ({@link #fileName}, {@link #sliceOfFile}). Every
 *       writer of a sliced table's files (reconcile, compaction) writes the rows of one slice
 *       per file and names it so, which is why the assignment survives rewrites.</li>
 *   <li>Slice progress: every commit of a sliced table carries {@code se.wal.seq.<id>} for
 *       every slice and {@code se.wal.seq} = the least of them, so the newest snapshot with
 *       {@code se.wal.seq} holds all of them ({@link #marks}); readers that know nothing of
 *       slices see the least progress, which is where the table's unreconciled WAL starts.</li>
 * </ul>
 */
public final class TableSlices {
  /** The most slices a table may have. */
  public static final int MAX_SLICES = 256;
  /** The size of the slice hash space: hashes are in {@code [0, HASH_SPACE)}. */
  public static final long HASH_SPACE = 1L << 32;
  private static final String FILE_TAG = "slice-";

  private TableSlices() {}

  /** One slice: id, and the hash range {@code [lo, hi)} it owns. */
  public record Slice(int id, long lo, long hi) {
    public Slice {
      if (id < 0 || lo < 0 || hi > HASH_SPACE || lo >= hi) {
        throw new IllegalArgumentException("slice " + id + " [" + lo + ", " + hi + ")");
      }
    }

    public boolean contains(long hash) {
      return hash >= lo && hash < hi;
    }

    /** The range as inclusive hex bounds, e.g. {@code 00000000-3fffffff}. */
    public String range() {
      return String.format("%08x-%08x", lo, hi - 1);
    }
  }

  /** {@code count} slices with ids 0..count-1 over equal hash ranges. */
  public static List<Slice> uniform(int count) {
    if (count < 1 || count > MAX_SLICES) {
      throw new IllegalArgumentException("slice count " + count);
    }
    List<Slice> slices = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      slices.add(new Slice(i, HASH_SPACE * i / count, HASH_SPACE * (i + 1) / count));
    }
    return slices;
  }

  /** The slice hash of a key's canonical text (see the class comment). */
  public static long hash(String keyText) {
    try {
      byte[] d = MessageDigest.getInstance("MD5").digest(keyText.getBytes(StandardCharsets.UTF_8));
      return ((d[0] & 0xffL) << 24) | ((d[1] & 0xffL) << 16) | ((d[2] & 0xffL) << 8) | (d[3] & 0xffL);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("MD5 is a required JDK algorithm", e);
    }
  }

  /** The slice of {@code slices} that owns {@code hash}. */
  public static Slice owner(List<Slice> slices, long hash) {
    for (Slice s : slices) {
      if (s.contains(hash)) {
        return s;
      }
    }
    throw new IllegalArgumentException("no slice owns hash " + hash);
  }

  /** The file name of a data file of slice {@code sliceId}. */
  public static String fileName(int sliceId, String name) {
    return FILE_TAG + sliceId + "-" + name;
  }

  /** The slice a data file at {@code location} belongs to; empty for a file of no slice. */
  public static OptionalInt sliceOfFile(String location) {
    String name = location.substring(location.lastIndexOf('/') + 1);
    if (!name.startsWith(FILE_TAG)) {
      return OptionalInt.empty();
    }
    int end = name.indexOf('-', FILE_TAG.length());
    if (end <= FILE_TAG.length()) {
      return OptionalInt.empty();
    }
    try {
      return OptionalInt.of(Integer.parseInt(name.substring(FILE_TAG.length(), end)));
    } catch (NumberFormatException e) {
      return OptionalInt.empty();
    }
  }

  /** The snapshot summary key of slice {@code sliceId}'s progress. */
  public static String markKey(int sliceId) {
    return TableProperties.SUMMARY_WAL_SEQ_SLICE_PREFIX + sliceId;
  }

  /**
   * The slices' progress as of {@code snapshot} (null: none) of {@code table}: the
   * {@code se.wal.seq.<id>} entries of the newest snapshot in its lineage that has
   * {@code se.wal.seq}. A slice without an entry has progress 0.
   */
  public static Map<Integer, Long> marks(Table table, Snapshot snapshot) {
    Map<Integer, Long> marks = new HashMap<>();
    Snapshot s = snapshot;
    while (s != null && (s.summary() == null || !s.summary().containsKey(TableProperties.SUMMARY_WAL_SEQ))) {
      s = s.parentId() == null ? null : table.snapshot(s.parentId());
    }
    return s == null ? marks : marksIn(s);
  }

  /** The {@code se.wal.seq.<id>} entries of one snapshot's summary. */
  public static Map<Integer, Long> marksIn(Snapshot snapshot) {
    Map<Integer, Long> marks = new HashMap<>();
    if (snapshot.summary() == null) {
      return marks;
    }
    String prefix = TableProperties.SUMMARY_WAL_SEQ_SLICE_PREFIX;
    for (Map.Entry<String, String> e : snapshot.summary().entrySet()) {
      if (e.getKey().startsWith(prefix)) {
        try {
          marks.put(Integer.parseInt(e.getKey().substring(prefix.length())), Long.parseLong(e.getValue()));
        } catch (NumberFormatException ignored) {
          // not a slice entry
        }
      }
    }
    return marks;
  }

  /** What one slice holds as of a snapshot. */
  public record SliceStats(Slice slice, long walSeq, int dataFiles, long rows) {}

  /**
   * Per slice of {@code slices}: its progress, data files and live rows (rows less the positions
   * its deletion vectors delete) as of {@code snapshot} (null: none). Files of no slice of
   * {@code slices} are not counted.
   */
  public static List<SliceStats> stats(Table table, Snapshot snapshot, List<Slice> slices) {
    Map<Integer, long[]> counts = new HashMap<>();
    for (FileScanTask task : ManifestThreads.tasks(table, snapshot, scan -> scan.ignoreResiduals())) {
      OptionalInt slice = sliceOfFile(task.file().location());
      if (slice.isEmpty()) {
        continue;
      }
      long deleted = 0;
      for (DeleteFile d : task.deletes()) {
        deleted += d.recordCount();
      }
      long[] c = counts.computeIfAbsent(slice.getAsInt(), id -> new long[2]);
      c[0]++;
      c[1] += task.file().recordCount() - deleted;
    }
    Map<Integer, Long> marks = marks(table, snapshot);
    List<SliceStats> result = new ArrayList<>();
    for (Slice s : slices) {
      long[] c = counts.getOrDefault(s.id(), new long[2]);
      result.add(new SliceStats(s, marks.getOrDefault(s.id(), 0L), (int) c[0], c[1]));
    }
    return result;
  }
}
