package io.storageengine.reconcile;

import io.storageengine.common.Ids;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.wal.TableWal;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps each table's {@link ReconcileStatus} on cluster storage, next to its WAL
 * ({@code tenants/<catalog>/tables/<uuid>/reconcile.json}), so that every process (the CLI
 * through any server, a server that does not reconcile, another worker) sees a stuck table.
 * Written only when the status changes; a healthy table has no file.
 */
public final class ReconcileStatusStore {
  private static final Pattern STATUS_KEY =
      Pattern.compile("tenants/([^/]+)/tables/([^/]+)/reconcile\\.json");

  private final ObjectStore store;

  public ReconcileStatusStore(ObjectStore store) {
    this.store = store;
  }

  /** The key of {@code table}'s status. */
  public static String key(TableWal table) {
    return table.prefix() + "reconcile.json";
  }

  /** Records {@code status}; a healthy status removes the file. */
  public void write(TableWal table, ReconcileStatus status) {
    if (status.failing()) {
      store.put(key(table), Json.toBytes(status.toJson()));
    } else {
      store.delete(key(table));
    }
  }

  /**
   * Every table with a failing status recorded, found by listing cluster storage (for operators:
   * one listing of {@code tenants/}). A status that cannot be read is reported as failing with
   * the reason, never hidden.
   */
  public Map<TableWal, ReconcileStatus> failing() {
    Map<TableWal, ReconcileStatus> result = new LinkedHashMap<>();
    for (ObjectStore.ObjectInfo object : store.list("tenants/")) {
      Matcher m = STATUS_KEY.matcher(object.key());
      if (!m.matches() || !Ids.isValidCatalogId(m.group(1))) {
        continue;
      }
      TableWal table;
      try {
        table = new TableWal(m.group(1), UUID.fromString(m.group(2)));
      } catch (IllegalArgumentException e) {
        continue;
      }
      ReconcileStatus status;
      try {
        status = read(table);
      } catch (SeException e) {
        status = new ReconcileStatus(null, Instant.EPOCH, 1, e.getMessage(), 0, 0);
      }
      if (status.failing()) {
        result.put(table, status);
      }
    }
    return result;
  }

  /** The recorded status; {@link ReconcileStatus#HEALTHY} when none is recorded. */
  public ReconcileStatus read(TableWal table) {
    String key = key(table);
    Optional<ObjectStore.Blob> blob = store.get(key);
    return blob.map(b -> ReconcileStatus.fromJson(Json.parse(b.data()), key))
        .orElse(ReconcileStatus.HEALTHY);
  }
}
