package io.storageengine.reconcile;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.catalog.TableSettings;
import io.storageengine.catalog.TableSlices;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.wal.TableWal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.Table;

/**
 * The slices-meta of a sliced entity table: {@code tenants/<c>/tables/<uuid>/slices.json} on
 * cluster storage, next to the table's WAL. It is created by the first reader from
 * {@code se.slice.count} ({@link TableSlices#uniform}, with {@code putIfAbsent}, so racing
 * creators agree) and changed only by compare-and-swap, each change one version up.
 *
 * <p>It knows the hash range of every slice id the table ever had or was about to have, and
 * which slices are active. Which slices a <em>snapshot</em> has is decided by the snapshot, not
 * by this file: the ids of its {@code se.wal.seq.<id>} entries ({@link Layout#asOf}); a split or
 * merge becomes real with the one Iceberg commit that rewrites the slices' files and replaces
 * their progress entries (see {@code maintenance.SliceResizer}). The protocol of such a change:
 *
 * <ol>
 *   <li>{@link #propose}: version v+1 records the change as {@code pending} (the slices it
 *       replaces, the new slices with new ids, when it started); the active slices stay. Passes
 *       of the replaced slices hold back while it is fresh, but those of a merge behind the
 *       others catch up with them ({@link Layout#passLimit}).</li>
 *   <li>The Iceberg commit: the point of no return.</li>
 *   <li>{@link #settle}: version v+2 makes the active slices those of the current snapshot,
 *       retires the replaced ones and clears {@code pending}. Every pass settles first, so a
 *       crash between 2 and 3 is finished by the next pass.</li>
 * </ol>
 *
 * A change that never committed is rolled back ({@link #rollBack}: its new slices are retired
 * unused, their ids never reused) by the next maintenance pass of the table, or by any pass once
 * it is older than {@link #LEASE_MILLIS}. Even a commit that lands after its roll-back leaves a
 * consistent table: the ranges of its ids are still known, and the next pass settles onto it.
 *
 * <p>Format: {@code {"format":1,"hash":"md5-32","version":<n>,"next_id":<k>,"slices":[{"id":0,"lo":0,"hi":1073741824},...],
 * "retired":[...],"pending":{"op":"split","from":[0],"to":[{"id":4,...},{"id":5,...}],"started_at":<epoch ms>}}}:
 * active slices as half-open hash ranges covering {@code [0, 2^32)} without overlap, ordered by
 * {@code lo}; {@code next_id}, {@code retired} and {@code pending} may be absent (none).
 */
public final class SliceMeta {
  static final String FILE = "slices.json";
  private static final String HASH = "md5-32";
  /** A pending change older than this is taken to have crashed and may be rolled back by any pass. */
  public static final long LEASE_MILLIS = 10 * 60_000L;

  /** A split ({@code from} one slice, {@code to} two) or a merge ({@code from} two neighbours, {@code to} one). */
  public record Change(String op, List<Integer> from, List<TableSlices.Slice> to, long startedAtMillis) {
    public static final String SPLIT = "split";
    public static final String MERGE = "merge";

    public Change {
      from = List.copyOf(from);
      to = List.copyOf(to);
    }

    @Override
    public String toString() {
      return op + " " + from + " -> " + to.stream().map(TableSlices.Slice::id).toList();
    }
  }

  /** The slices-meta as read, with the etag to compare-and-swap against. */
  public record Layout(List<TableSlices.Slice> slices, long version, String etag, int nextId,
      List<TableSlices.Slice> retired, Optional<Change> pending) {
    public Layout {
      slices = List.copyOf(slices);
      retired = List.copyOf(retired);
    }

    /** The active slice {@code id}; NOT_FOUND when it is not active. */
    public TableSlices.Slice slice(int id) {
      for (TableSlices.Slice s : slices) {
        if (s.id() == id) {
          return s;
        }
      }
      throw SeException.notFound("table has no slice %d", id);
    }

    /** The range of slice {@code id}, active, pending or retired. */
    public Optional<TableSlices.Slice> known(int id) {
      List<TableSlices.Slice> all = new ArrayList<>(slices);
      pending.ifPresent(c -> all.addAll(c.to()));
      all.addAll(retired);
      return all.stream().filter(s -> s.id() == id).findFirst();
    }

    /**
     * The slices of a snapshot whose progress entries are {@code marks} ({@link
     * TableSlices#marks}): the ranges of their ids; the active slices when there are none (no
     * commit yet). Where two ranges overlap the higher id wins: ids only grow, so the lower one is
     * a slice a split or merge replaced whose entry a commit carried along by mistake (a slice's
     * commit retried across a split did so before that was refused: {@link
     * WalMarks#committingSlice}); the next commit of a slice leaves it out.
     */
    public List<TableSlices.Slice> asOf(Map<Integer, Long> marks) {
      if (marks.isEmpty()) {
        return slices;
      }
      List<TableSlices.Slice> named = new ArrayList<>();
      for (int id : marks.keySet()) {
        named.add(known(id).orElseThrow(() -> SeException.internal("the table's snapshot has progress of slice "
            + id + ", which its slices-meta does not know", null)));
      }
      named.sort(Comparator.comparingInt(TableSlices.Slice::id).reversed());
      List<TableSlices.Slice> result = new ArrayList<>();
      for (TableSlices.Slice candidate : named) {
        if (result.stream().noneMatch(kept -> kept.lo() < candidate.hi() && candidate.lo() < kept.hi())) {
          result.add(candidate);
        }
      }
      result.sort(Comparator.comparingLong(TableSlices.Slice::lo));
      check("snapshot slices", result);
      return result;
    }

    /**
     * How far a pass of slice {@code id}, at the progress {@code marks} give, may go at
     * {@code nowMillis}: {@code Long.MAX_VALUE} unless a fresh pending change replaces the slice.
     * Then a split's slice, and a merge's slice that is as far as the furthest of the merged
     * ones, hold back (the value is their progress: their files are being rewritten and a pass
     * would only make the change's commit fail); a merge's slice behind goes up to the furthest
     * one, so that they meet at the same progress, which the merged slice inherits.
     */
    public long passLimit(int id, Map<Integer, Long> marks, long nowMillis) {
      if (pending.isEmpty() || !pending.get().from().contains(id)
          || nowMillis - pending.get().startedAtMillis() >= LEASE_MILLIS) {
        return Long.MAX_VALUE;
      }
      long own = marks.getOrDefault(id, 0L);
      if (!pending.get().op().equals(Change.MERGE)) {
        return own;
      }
      long furthest = own;
      for (int other : pending.get().from()) {
        furthest = Math.max(furthest, marks.getOrDefault(other, 0L));
      }
      return furthest;
    }
  }

  private SliceMeta() {}

  public static String key(TableWal table) {
    return table.prefix() + FILE;
  }

  /**
   * The slices-meta of {@code table} (WAL {@code tableWal}); empty when the table is not
   * sliced. The file is created from the table property when it does not exist yet.
   */
  public static Optional<Layout> load(ObjectStore store, TableWal tableWal, Table table) {
    TableSettings settings = TableSettings.of(table);
    if (!settings.entity() || !settings.sliced()) {
      return Optional.empty();
    }
    String key = key(tableWal);
    for (int attempt = 0; attempt < 3; attempt++) {
      Optional<ObjectStore.Blob> blob = store.get(key);
      if (blob.isPresent()) {
        return Optional.of(decode(key, blob.get().data(), blob.get().etag()));
      }
      if (WalHighWaterMark.of(table) > 0
          && TableSlices.marks(table, table.currentSnapshot()).isEmpty()) {
        throw SeException.invalid("table %s: %s is set on a table reconciled without slices; a table's slices "
            + "are fixed when it is created", table.name(), io.storageengine.catalog.TableProperties.SLICE_COUNT);
      }
      List<TableSlices.Slice> uniform = TableSlices.uniform(settings.sliceCount());
      Layout initial = new Layout(uniform, 1, null, uniform.size(), List.of(), Optional.empty());
      byte[] created = encode(initial);
      Optional<String> etag = store.putIfAbsent(key, created);
      if (etag.isPresent()) {
        return Optional.of(decode(key, created, etag.get()));
      }
    }
    throw SeException.unavailable("slices-meta " + key + " could be neither read nor created", null);
  }

  /** The slices-meta as stored now; empty when it does not exist. */
  public static Optional<Layout> read(ObjectStore store, TableWal tableWal) {
    String key = key(tableWal);
    return store.get(key).map(blob -> decode(key, blob.data(), blob.etag()));
  }

  /**
   * Step 1 of a change: records {@code op} of the active slices {@code from} into new slices
   * with the given ranges ({@code lo}, {@code hi} pairs) and fresh ids, started at
   * {@code nowMillis}; empty when the file changed since {@code current} was read. The current
   * layout must have no pending change.
   */
  public static Optional<Layout> propose(ObjectStore store, TableWal tableWal, Layout current, String op,
      List<Integer> from, List<long[]> ranges, long nowMillis) {
    if (current.pending().isPresent()) {
      throw SeException.internal("slices-meta " + key(tableWal) + " already has a pending change "
          + current.pending().get(), null);
    }
    for (int id : from) {
      current.slice(id);
    }
    int next = current.nextId();
    List<TableSlices.Slice> to = new ArrayList<>();
    for (long[] r : ranges) {
      to.add(new TableSlices.Slice(next++, r[0], r[1]));
    }
    Change change = new Change(op, from, to, nowMillis);
    return write(store, tableWal, current, new Layout(current.slices(), current.version() + 1, null, next,
        current.retired(), Optional.of(change)));
  }

  /**
   * Step 3 of a change (and of every pass): makes the active slices those of the snapshot whose
   * progress entries are {@code marks}, retiring the others, and clears a pending change the
   * snapshot has applied. Returns the layout now stored: {@code current} when nothing was to
   * do, the new one, or (lost a race) the one read again.
   *
   * <p>{@code marks} must be those of the table's current snapshot loaded <em>after</em>
   * {@code current} was read: then a layout that another pass already settled is never moved
   * back to an older snapshot's slices (the compare-and-swap fails if it changed meanwhile).
   */
  public static Layout settle(ObjectStore store, TableWal tableWal, Layout current, Map<Integer, Long> marks) {
    List<TableSlices.Slice> now = current.asOf(marks);
    Set<Integer> nowIds = ids(now);
    Optional<Change> pending = current.pending();
    boolean applied = pending.isPresent() && nowIds.containsAll(ids(pending.get().to()));
    if (nowIds.equals(ids(current.slices())) && !applied) {
      return current;
    }
    Map<Integer, TableSlices.Slice> retired = new LinkedHashMap<>();
    current.retired().forEach(s -> retired.put(s.id(), s));
    current.slices().stream().filter(s -> !nowIds.contains(s.id())).forEach(s -> retired.put(s.id(), s));
    if (pending.isPresent() && !nowIds.containsAll(pending.get().from())) {
      // The replaced slices are gone: the change (or a later one) applied; nothing is pending.
      pending.get().to().stream().filter(s -> !nowIds.contains(s.id())).forEach(s -> retired.put(s.id(), s));
      pending = Optional.empty();
    } else if (applied) {
      pending = Optional.empty();
    }
    retired.keySet().removeAll(nowIds);
    Layout next = new Layout(now, current.version() + 1, null, current.nextId(), List.copyOf(retired.values()),
        pending);
    return write(store, tableWal, current, next).orElseGet(() -> read(store, tableWal).orElse(current));
  }

  /**
   * Rolls back the pending change of {@code current}, which the current snapshot has not
   * applied: its new slices are retired unused. Empty when the file changed since it was read.
   */
  public static Optional<Layout> rollBack(ObjectStore store, TableWal tableWal, Layout current) {
    if (current.pending().isEmpty()) {
      return Optional.of(current);
    }
    List<TableSlices.Slice> retired = new ArrayList<>(current.retired());
    retired.addAll(current.pending().get().to());
    return write(store, tableWal, current, new Layout(current.slices(), current.version() + 1, null,
        current.nextId(), retired, Optional.empty()));
  }

  private static Optional<Layout> write(ObjectStore store, TableWal tableWal, Layout current, Layout next) {
    check(key(tableWal), next.slices());
    byte[] data = encode(next);
    return store.putIfMatch(key(tableWal), data, current.etag())
        .map(etag -> new Layout(next.slices(), next.version(), etag, next.nextId(), next.retired(), next.pending()));
  }

  private static Set<Integer> ids(List<TableSlices.Slice> slices) {
    Set<Integer> ids = new HashSet<>();
    slices.forEach(s -> ids.add(s.id()));
    return ids;
  }

  /** A slices-meta as its JSON reads ({@code se table describe} gets it from the server); no etag. */
  public static Layout parse(byte[] json) {
    return decode(FILE, json, null);
  }

  static byte[] encode(Layout layout) {
    ObjectNode root = Json.object();
    root.put("format", 1);
    root.put("hash", HASH);
    root.put("version", layout.version());
    root.put("next_id", layout.nextId());
    putSlices(root.putArray("slices"), layout.slices());
    if (!layout.retired().isEmpty()) {
      putSlices(root.putArray("retired"), layout.retired());
    }
    layout.pending().ifPresent(c -> {
      ObjectNode p = root.putObject("pending");
      p.put("op", c.op());
      ArrayNode from = p.putArray("from");
      c.from().forEach(from::add);
      putSlices(p.putArray("to"), c.to());
      p.put("started_at", c.startedAtMillis());
    });
    return Json.toBytes(root);
  }

  private static void putSlices(ArrayNode list, List<TableSlices.Slice> slices) {
    for (TableSlices.Slice s : slices) {
      list.addObject().put("id", s.id()).put("lo", s.lo()).put("hi", s.hi());
    }
  }

  private static List<TableSlices.Slice> slices(JsonNode list) {
    List<TableSlices.Slice> slices = new ArrayList<>();
    for (JsonNode s : list) {
      slices.add(new TableSlices.Slice(s.path("id").asInt(), s.path("lo").asLong(), s.path("hi").asLong()));
    }
    return slices;
  }

  static Layout decode(String key, byte[] data, String etag) {
    JsonNode root = Json.parse(data);
    if (root.path("format").asInt() != 1 || !HASH.equals(root.path("hash").asText())) {
      throw SeException.internal("slices-meta " + key + " has an unknown format or hash", null);
    }
    List<TableSlices.Slice> slices = slices(root.path("slices"));
    check(key, slices);
    List<TableSlices.Slice> retired = slices(root.path("retired"));
    Optional<Change> pending = Optional.empty();
    JsonNode p = root.path("pending");
    if (p.isObject()) {
      List<Integer> from = new ArrayList<>();
      p.path("from").forEach(n -> from.add(n.asInt()));
      pending = Optional.of(new Change(p.path("op").asText(), from, slices(p.path("to")),
          p.path("started_at").asLong()));
    }
    int most = -1;
    for (TableSlices.Slice s : slices) {
      most = Math.max(most, s.id());
    }
    for (TableSlices.Slice s : retired) {
      most = Math.max(most, s.id());
    }
    if (pending.isPresent()) {
      for (TableSlices.Slice s : pending.get().to()) {
        most = Math.max(most, s.id());
      }
    }
    int nextId = Math.max(most + 1, root.path("next_id").asInt(0));
    return new Layout(slices, root.path("version").asLong(), etag, nextId, retired, pending);
  }

  /** Ranges ordered, without gap or overlap, covering the hash space; ids unique. */
  private static void check(String key, List<TableSlices.Slice> slices) {
    long next = 0;
    Set<Integer> ids = new HashSet<>();
    for (TableSlices.Slice s : slices) {
      if (s.lo() != next || !ids.add(s.id())) {
        throw SeException.internal("slices-meta " + key + ": slice " + s.id() + " does not continue at " + next,
            null);
      }
      next = s.hi();
    }
    if (next != TableSlices.HASH_SPACE) {
      throw SeException.internal("slices-meta " + key + ": slices end at " + next + ", not 2^32", null);
    }
  }
}
