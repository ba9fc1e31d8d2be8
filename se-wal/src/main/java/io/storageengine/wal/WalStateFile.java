package io.storageengine.wal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.objectstore.ObjectStore.Blob;
import java.util.Iterator;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * Reads and changes a table's {@code state.json} ({@code {"published_seq":N,"gc_seq":M}}).
 * Changes are compare-and-swap loops: {@code putIfAbsent} while the file does not exist,
 * {@code putIfMatch} on the etag that was read afterwards, so no concurrent change is lost.
 */
final class WalStateFile {
  private static final String PUBLISHED = "published_seq";
  private static final String GC = "gc_seq";

  private final ObjectStore store;
  private final StoreRetry retry;

  WalStateFile(ObjectStore store, StoreRetry retry) {
    this.store = store;
    this.retry = retry;
  }

  WalState read(TableWal table) {
    return readVersioned(table).map(Versioned::state).orElse(WalState.EMPTY);
  }

  /**
   * Applies {@code change} to the current state until a CAS succeeds and returns the state then
   * stored. When {@code change} returns its argument unchanged nothing is written.
   */
  WalState update(TableWal table, UnaryOperator<WalState> change) {
    String key = table.stateKey();
    while (true) {
      Optional<Versioned> current = readVersioned(table);
      WalState before = current.map(Versioned::state).orElse(WalState.EMPTY);
      WalState after = change.apply(before);
      if (after.equals(before)) {
        return before;
      }
      byte[] json = toJson(after);
      // A write whose response was lost looks like a lost race here: the next round reads the
      // state back and finds the change already made.
      Optional<String> written = current.isPresent()
          ? retry.call("update " + key, () -> store.putIfMatch(key, json, current.get().etag()))
          : retry.call("create " + key, () -> store.putIfAbsent(key, json));
      if (written.isPresent()) {
        return after;
      }
    }
  }

  private Optional<Versioned> readVersioned(TableWal table) {
    String key = table.stateKey();
    Optional<Blob> blob = retry.call("read " + key, () -> store.get(key));
    return blob.map(b -> new Versioned(parse(key, b.data()), b.etag()));
  }

  static byte[] toJson(WalState state) {
    ObjectNode node = Json.object();
    node.put(PUBLISHED, state.publishedSeq());
    node.put(GC, state.gcSeq());
    return Json.toBytes(node);
  }

  static WalState parse(String key, byte[] bytes) {
    JsonNode node;
    try {
      node = Json.parse(bytes);
    } catch (SeException e) {
      throw corrupt(key, e.getMessage());
    }
    if (!node.isObject()) {
      throw corrupt(key, "not a JSON object");
    }
    for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!name.equals(PUBLISHED) && !name.equals(GC)) {
        throw corrupt(key, "unknown field '" + name + "'");
      }
    }
    long published = sequence(key, node, PUBLISHED);
    long gc = sequence(key, node, GC);
    if (gc > published) {
      throw corrupt(key, GC + " " + gc + " is above " + PUBLISHED + " " + published);
    }
    return new WalState(published, gc);
  }

  private static long sequence(String key, JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || !value.isIntegralNumber() || !value.canConvertToLong()
        || value.asLong() < 0) {
      throw corrupt(key, "'" + field + "' must be a non-negative integer");
    }
    return value.asLong();
  }

  private static SeException corrupt(String key, String detail) {
    return new SeException(ErrorCode.INTERNAL, "corrupt WAL state " + key + ": " + detail);
  }

  private record Versioned(WalState state, String etag) {}
}
