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
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.Table;

/**
 * The slices-meta of a sliced entity table: {@code tenants/<c>/tables/<uuid>/slices.json} on
 * cluster storage, next to the table's WAL, the authority on which slices the table has. It is
 * created by the first reader from {@code se.slice.count} ({@link TableSlices#uniform}, with
 * {@code putIfAbsent}, so racing creators agree) and changed only by compare-and-swap
 * ({@link #replace}).
 *
 * <p>Format: {@code {"format":1,"hash":"md5-32","version":<n>,"slices":[{"id":0,"lo":0,"hi":1073741824},...]}}:
 * half-open hash ranges covering {@code [0, 2^32)} without overlap, ordered by {@code lo}.
 */
public final class SliceMeta {
  static final String FILE = "slices.json";
  private static final String HASH = "md5-32";

  /** The slices as read, with the etag to compare-and-swap against. */
  public record Layout(List<TableSlices.Slice> slices, long version, String etag) {
    public Layout {
      slices = List.copyOf(slices);
    }

    public TableSlices.Slice slice(int id) {
      for (TableSlices.Slice s : slices) {
        if (s.id() == id) {
          return s;
        }
      }
      throw SeException.notFound("table has no slice %d", id);
    }
  }

  private SliceMeta() {}

  public static String key(TableWal table) {
    return table.prefix() + FILE;
  }

  /**
   * The slices of {@code table} (WAL {@code tableWal}); empty when the table is not sliced. The
   * file is created from the table property when it does not exist yet.
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
      byte[] created = encode(TableSlices.uniform(settings.sliceCount()), 1);
      Optional<String> etag = store.putIfAbsent(key, created);
      if (etag.isPresent()) {
        return Optional.of(decode(key, created, etag.get()));
      }
    }
    throw SeException.unavailable("slices-meta " + key + " could be neither read nor created", null);
  }

  /**
   * Replaces the layout read as {@code current} by {@code slices} if no one changed it since;
   * empty when someone did (read again and decide again).
   */
  public static Optional<Layout> replace(ObjectStore store, TableWal tableWal, Layout current,
      List<TableSlices.Slice> slices) {
    check(key(tableWal), slices);
    byte[] data = encode(slices, current.version() + 1);
    return store.putIfMatch(key(tableWal), data, current.etag())
        .map(etag -> new Layout(slices, current.version() + 1, etag));
  }

  static byte[] encode(List<TableSlices.Slice> slices, long version) {
    ObjectNode root = Json.object();
    root.put("format", 1);
    root.put("hash", HASH);
    root.put("version", version);
    ArrayNode list = root.putArray("slices");
    for (TableSlices.Slice s : slices) {
      list.addObject().put("id", s.id()).put("lo", s.lo()).put("hi", s.hi());
    }
    return Json.toBytes(root);
  }

  static Layout decode(String key, byte[] data, String etag) {
    JsonNode root = Json.parse(data);
    if (root.path("format").asInt() != 1 || !HASH.equals(root.path("hash").asText())) {
      throw SeException.internal("slices-meta " + key + " has an unknown format or hash", null);
    }
    List<TableSlices.Slice> slices = new ArrayList<>();
    for (JsonNode s : root.path("slices")) {
      slices.add(new TableSlices.Slice(s.path("id").asInt(), s.path("lo").asLong(), s.path("hi").asLong()));
    }
    check(key, slices);
    return new Layout(slices, root.path("version").asLong(), etag);
  }

  /** Ranges ordered, without gap or overlap, covering the hash space; ids unique. */
  private static void check(String key, List<TableSlices.Slice> slices) {
    long next = 0;
    java.util.Set<Integer> ids = new java.util.HashSet<>();
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
