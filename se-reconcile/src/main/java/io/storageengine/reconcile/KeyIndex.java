package io.storageengine.reconcile;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;

/**
 * Where the live row of each primary key is, in one entity table's data files (or one slice's):
 * for a key of one integral column (held as a {@code long}), the row's file and position, its
 * version and its explicit v3 {@code _row_id}. An entity pass looks its batch's keys up here
 * instead of joining them with the key column of every candidate file, so its cost follows the
 * batch, not the table ({@link KeyIndexReads}).
 *
 * <p>An index describes exactly one <em>file set</em> ({@link #fileSet}): each data file's
 * location with the identities of its delete files. Data files and deletion vectors are
 * immutable (a replaced vector is a new file or a new blob), so the live rows of a file set never
 * change, and a pass may use the index only when it plans the very same set ({@link #matches}).
 * A pass leaves its own changes <em>pending</em> ({@link #pend}): the keys whose rows it replaced
 * or deleted, the rows of the files it wrote and the file set its commit makes. The next pass
 * applies them when it plans that set (the commit landed), drops them when it plans the old one
 * (it did not), and otherwise the index is not used (another writer, such as compaction, changed
 * the files). Nothing is ever trusted that the planned files do not confirm.
 *
 * <p>Open addressing with linear probing in parallel arrays: 32 bytes a slot (24 without a
 * version column), at most 3/4 full, so about 43 bytes a key (4.3 GB for 100 M keys); grown by
 * half when full. Not thread-safe: {@link KeyIndexes} lends an index to one
 * pass at a time.
 */
final class KeyIndex {
  /** A row without a version column value, or whose {@code _row_id} is inherited (not written). */
  static final long NONE = Long.MIN_VALUE;
  /** The place of a free slot (a place is stored plus one, so new arrays are all free). */
  private static final long EMPTY = 0;
  /** Where a slot's fields are, from the slot's first element: key, place, row id, version. */
  private static final int KEY = 0;
  private static final int PLACE = 1;
  private static final int ROW_ID = 2;
  private static final int VERSION = 3;
  private static final long MAX_ARRAY = Integer.MAX_VALUE - 8;

  /** The file set the index describes: data file location to its delete files' identities. */
  private Map<String, String> files;
  private final List<String> locations = new ArrayList<>();
  private final Map<String, Integer> ordinals = new HashMap<>();
  private final boolean versioned;
  private final long maxBytes;
  /** Longs per slot: 4, or 3 without a version. */
  private final int stride;
  /**
   * The slots, each {@link #stride} longs side by side (a lookup touches one cache line, not one
   * per field): the key, its place ({@code (ordinal << 32 | position) + 1}, or {@link #EMPTY} for a
   * free slot), its row id and its version.
   */
  private long[] slots;
  private int size;
  private int capacity;
  private Pending pending;

  /**
   * An empty index for the file set {@code files} (filled by {@link #put}).
   *
   * @param versioned whether rows have a version (the table has a version column)
   * @param expectedRows how many rows will be put (sizes the table once)
   * @param maxBytes what the index may grow to; a {@link #put} that would take more throws
   *     {@link Unusable}, as does this constructor when {@code expectedRows} do not fit
   */
  KeyIndex(Map<String, String> files, boolean versioned, long expectedRows, long maxBytes) {
    this.files = Map.copyOf(files);
    this.versioned = versioned;
    this.stride = versioned ? 4 : 3;
    this.maxBytes = maxBytes;
    if (bytesFor(expectedRows, versioned) > maxBytes) {
      throw new Unusable(expectedRows);
    }
    // A quarter more room for the keys the next passes add, if the budget allows.
    long roomy = Math.max(16, expectedRows + expectedRows / 4);
    allocate(capacityFor(bytesFor(roomy, versioned) <= maxBytes ? roomy : Math.max(16, expectedRows), stride));
  }

  /**
   * Thrown when an index cannot describe the files (it would outgrow its memory budget, a key has
   * two live rows, a value collides with {@link #NONE}): the index is dropped and the pass reads
   * the files.
   */
  static final class Unusable extends RuntimeException {
    Unusable(String reason) {
      super(reason);
    }

    Unusable(long rows) {
      this("a key index of " + rows + " rows is over its memory budget");
    }
  }

  /** The bytes an index of {@code rows} rows takes. */
  static long bytesFor(long rows, boolean versioned) {
    return (long) capacityFor(Math.max(16, rows), versioned ? 4 : 3) * Long.BYTES * (versioned ? 4 : 3);
  }

  /** The bytes this index takes. */
  long bytes() {
    return (long) slots.length * Long.BYTES;
  }

  /** How many keys have a live row. */
  int size() {
    return size;
  }

  /**
   * The file set of scan tasks: each data file's location, with its delete files' locations and
   * blob offsets (a deletion vector is one blob of a Puffin file).
   */
  static Map<String, String> fileSet(List<FileScanTask> tasks) {
    Map<String, String> set = new HashMap<>();
    for (FileScanTask task : tasks) {
      set.put(task.file().location(), deletes(task));
    }
    return set;
  }

  /** The identities of {@code task}'s delete files, as its entry of a {@link #fileSet} holds them. */
  static String deletes(FileScanTask task) {
    TreeSet<String> deletes = new TreeSet<>();
    for (DeleteFile d : task.deletes()) {
      deletes.add(identity(d));
    }
    return String.join("\n", deletes);
  }

  /** A delete file's identity in a {@link #fileSet}. */
  static String identity(DeleteFile d) {
    return d.location() + "@" + d.contentOffset();
  }

  /** The file set this index describes. */
  Map<String, String> files() {
    return files;
  }

  /**
   * Whether the index describes {@code planned} (a {@link #fileSet}): true when it did already
   * (a pending change is dropped: its commit did not land) or when its pending change makes it
   * (the change is applied); false otherwise, and the index must not be used.
   */
  boolean matches(Map<String, String> planned) {
    if (files.equals(planned)) {
      pending = null;
      return true;
    }
    return describes(planned);
  }

  /**
   * Forgets the keys whose live rows are in a file of {@code gone} (by ordinal) or at a position
   * that {@code deleted[ordinal]} (null: none) now says is deleted, and returns how many. One
   * pass over every slot finds them; when they are most of the index (a compaction rewrote the
   * files), the others are put into the cleared slots again instead of removing each stale key
   * (a random access and a shift each: 9.5 M of them took longer than reading the new files).
   */
  long removeStale(boolean[] gone, java.util.function.LongPredicate[] deleted) {
    long[] stale = new long[1024];
    int n = 0;
    for (int at = 0; at < slots.length; at += stride) {
      if (slots[at + PLACE] != EMPTY && isStale(at, gone, deleted)) {
        if (n == stale.length) {
          stale = Arrays.copyOf(stale, 2 * n);
        }
        stale[n++] = slots[at + KEY];
      }
    }
    if ((long) n * 2 <= size) {
      for (int i = 0; i < n; i++) {
        remove(stale[i]);
      }
      return n;
    }
    long[] kept = new long[(size - n) * stride];
    int k = 0;
    for (int at = 0; at < slots.length; at += stride) {
      if (slots[at + PLACE] != EMPTY && !isStale(at, gone, deleted)) {
        System.arraycopy(slots, at, kept, k, stride);
        k += stride;
      }
    }
    Arrays.fill(slots, EMPTY);
    size = 0;
    for (int from = 0; from < k; from += stride) {
      System.arraycopy(kept, from, slots, find(kept[from + KEY]) * stride, stride);
      size++;
    }
    return n;
  }

  private boolean isStale(int at, boolean[] gone, java.util.function.LongPredicate[] deleted) {
    long place = slots[at + PLACE] - 1;
    int ordinal = (int) (place >>> 32);
    return (ordinal < gone.length && gone[ordinal])
        || (ordinal < deleted.length && deleted[ordinal] != null && deleted[ordinal].test(place & 0xFFFF_FFFFL));
  }

  /**
   * Before the index is brought to {@code planned} by what changed ({@link #removeStale},
   * {@link #synced}): applies the pending change if its commit landed ({@code planned} has a
   * data file it wrote; with none, every deletion vector it made), else drops it. Either way the
   * index then describes a set the planned one was made from, which is all a sync needs.
   */
  void settle(Map<String, String> planned) {
    if (pending == null) {
      return;
    }
    boolean landed = true;
    if (!pending.written.isEmpty()) {
      landed = pending.written.stream().anyMatch(w -> planned.containsKey(w.location()));
    } else {
      for (Map.Entry<String, String> e : pending.files.entrySet()) {
        if (!e.getValue().equals(files.get(e.getKey())) && !e.getValue().equals(planned.get(e.getKey()))) {
          landed = false;
        }
      }
    }
    Pending change = pending;
    pending = null;
    if (landed) {
      apply(change);
    }
  }

  /**
   * Says the index now describes {@code planned}: for a caller that brought its rows there
   * itself (removed the stale keys, added the rows of the new files); drops a pending change.
   */
  void synced(Map<String, String> planned) {
    files = Map.copyOf(planned);
    pending = null;
  }

  /**
   * For a reader of a snapshot (not a pass): whether the index describes {@code planned}, as it
   * is, or once its pending change is applied (the snapshot includes that commit), which this
   * does. Drops nothing: a reader of an older snapshot leaves a newer pending change as it is.
   */
  boolean describes(Map<String, String> planned) {
    if (files.equals(planned)) {
      return true;
    }
    if (pending != null && pending.files.equals(planned)) {
      apply(pending);
      pending = null;
      return true;
    }
    return false;
  }

  /** The ordinal of the data file at {@code location}, given one on first use. */
  int ordinal(String location) {
    Integer o = ordinals.get(location);
    if (o == null) {
      o = locations.size();
      locations.add(location);
      ordinals.put(location, o);
    }
    return o;
  }

  /** The location of the data file of ordinal {@code ordinal}. */
  String location(int ordinal) {
    return locations.get(ordinal);
  }

  /**
   * Records that {@code key}'s live row is at {@code position} of file {@code ordinal}; returns
   * false (and changes nothing) if the key already has one elsewhere: two live rows of one key.
   */
  boolean add(long key, int ordinal, long position, long version, long rowId) {
    int at = slotFor(key, position);
    if (slots[at + PLACE] != EMPTY) {
      return false;
    }
    write(at, key, ordinal, position, version, rowId);
    size++;
    return true;
  }

  /** Records {@code key}'s live row, replacing the one it had. */
  void put(long key, int ordinal, long position, long version, long rowId) {
    int at = slotFor(key, position);
    if (slots[at + PLACE] == EMPTY) {
      size++;
    }
    write(at, key, ordinal, position, version, rowId);
  }

  /** The first element of {@code key}'s slot, or of the free slot it would take (room made first). */
  private int slotFor(long key, long position) {
    if (position < 0 || position > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("row position " + position + " is beyond what a key index holds");
    }
    if (size + 1 > (long) capacity * 3 / 4 && !grow() && size + 1 > (long) capacity * 7 / 8) {
      throw new Unusable(size + 1L);
    }
    return find(key) * stride;
  }

  private void write(int at, long key, int ordinal, long position, long version, long rowId) {
    slots[at + KEY] = key;
    slots[at + PLACE] = (((long) ordinal << 32) | position) + 1;
    slots[at + ROW_ID] = rowId;
    if (versioned) {
      slots[at + VERSION] = version;
    }
  }

  /** Forgets {@code key}'s live row (it was deleted or replaced); false if it had none. */
  boolean remove(long key) {
    int slot = find(key);
    if (slots[slot * stride + PLACE] == EMPTY) {
      return false;
    }
    slots[slot * stride + PLACE] = EMPTY;
    size--;
    // Backward-shift deletion: move later members of the probe run into the hole.
    int hole = slot;
    int i = slot;
    while (true) {
      i = next(i);
      int at = i * stride;
      if (slots[at + PLACE] == EMPTY) {
        return true;
      }
      int home = home(slots[at + KEY]);
      boolean movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
      if (movable) {
        System.arraycopy(slots, at, slots, hole * stride, stride);
        slots[at + PLACE] = EMPTY;
        hole = i;
      }
    }
  }

  /** The live rows of the keys {@code keys[0 .. count)} that have one. */
  Hits lookup(long[] keys, int count) {
    Hits hits = new Hits(count);
    for (int i = 0; i < count; i++) {
      int at = find(keys[i]) * stride;
      long place = slots[at + PLACE] - 1;
      if (place != EMPTY - 1) {
        hits.add(keys[i], (int) (place >>> 32), place & 0xFFFF_FFFFL, versioned ? slots[at + VERSION] : NONE,
            slots[at + ROW_ID]);
      }
    }
    return hits;
  }

  /** Matching rows of a {@link #lookup}, in parallel arrays of {@link #count} entries. */
  static final class Hits {
    long[] keys;
    int[] ordinals;
    long[] positions;
    long[] versions;
    long[] rowIds;
    int count;

    private Hits(int capacity) {
      int n = Math.max(16, capacity);
      keys = new long[n];
      ordinals = new int[n];
      positions = new long[n];
      versions = new long[n];
      rowIds = new long[n];
    }

    private void add(long key, int ordinal, long position, long version, long rowId) {
      keys[count] = key;
      ordinals[count] = ordinal;
      positions[count] = position;
      versions[count] = version;
      rowIds[count] = rowId;
      count++;
    }
  }

  /** The rows of a data file a pass wrote: per row its key, position, version and explicit row id. */
  record WrittenFile(String location, long[] keys, long[] positions, long[] versions, long[] rowIds) {}

  /**
   * Leaves a pass's changes pending until a later pass plans {@code filesAfter}: the keys
   * {@code removed[0 .. removedCount)} lose their rows, then the rows of {@code written} are
   * added. Replaces any earlier pending change (the caller matched the index first).
   */
  void pend(Map<String, String> filesAfter, long[] removed, int removedCount, List<WrittenFile> written) {
    pending = new Pending(Map.copyOf(filesAfter), Arrays.copyOf(removed, removedCount), List.copyOf(written));
  }

  private record Pending(Map<String, String> files, long[] removed, List<WrittenFile> written) {}

  private void apply(Pending change) {
    for (long key : change.removed) {
      remove(key);
    }
    for (WrittenFile file : change.written) {
      int ordinal = ordinal(file.location());
      for (int i = 0; i < file.keys().length; i++) {
        put(file.keys()[i], ordinal, file.positions()[i], file.versions()[i], file.rowIds()[i]);
      }
    }
    files = change.files;
  }

  private int find(long key) {
    int slot = home(key);
    while (slots[slot * stride + PLACE] != EMPTY && slots[slot * stride + KEY] != key) {
      slot = next(slot);
    }
    return slot;
  }

  private int home(long key) {
    long h = key * 0x9E3779B97F4A7C15L;
    h ^= h >>> 29;
    h *= 0xBF58476D1CE4E5B9L;
    h ^= h >>> 32;
    // Lemire's multiply-shift: a slot in [0, capacity) for any capacity, not only powers of two.
    return (int) (((h >>> 32) * capacity) >>> 32);
  }

  private int next(int slot) {
    return slot + 1 == capacity ? 0 : slot + 1;
  }

  private static int capacityFor(long rows, int stride) {
    long needed = rows * 4 / 3 + 1;
    if (needed * stride > MAX_ARRAY) {
      throw new Unusable(rows);
    }
    return (int) needed;
  }

  private void allocate(int capacity) {
    slots = new long[capacity * stride];
    this.capacity = capacity;
    size = 0;
  }

  /**
   * Half as large again, if the budget allows (the old arrays and the new ones are held at once
   * while keys move, so both count); false if not: the index then fills up to 7/8.
   */
  private boolean grow() {
    long larger = Math.min(MAX_ARRAY / stride, (long) capacity * 3 / 2 + 1);
    long largerBytes = larger * stride * Long.BYTES;
    if (larger <= capacity || bytes() + largerBytes > maxBytes) {
      return false;
    }
    long[] old = slots;
    allocate((int) larger);
    for (int from = 0; from < old.length; from += stride) {
      if (old[from + PLACE] != EMPTY) {
        System.arraycopy(old, from, slots, find(old[from + KEY]) * stride, stride);
        size++;
      }
    }
    return true;
  }

}
