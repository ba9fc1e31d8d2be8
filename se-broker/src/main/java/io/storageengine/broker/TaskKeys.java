package io.storageengine.broker;

import io.storageengine.common.Ids;
import io.storageengine.common.SeException;
import java.util.Map;
import java.util.UUID;

/** Keys, kinds and payloads of the engine's task kinds: one task per (kind, table). */
public final class TaskKeys {
  public static final String RECONCILE = "reconcile";
  public static final String MAINTAIN = "maintain";
  public static final String CATALOG = "catalog";
  public static final String TABLE_UUID = "table_uuid";

  private TaskKeys() {}

  /** {@code reconcile/<catalog>/<table-uuid>}. */
  public static String reconcileKey(String catalogId, String tableUuid) {
    return key(RECONCILE, catalogId, tableUuid);
  }

  /** {@code maintain/<catalog>/<table-uuid>}. */
  public static String maintainKey(String catalogId, String tableUuid) {
    return key(MAINTAIN, catalogId, tableUuid);
  }

  /**
   * The payload of a per-table task: {@code {catalog, table_uuid, exclusive_group}}; the group is
   * {@code <catalog>/<table-uuid>}, so a table's reconcile and maintenance never run at once.
   */
  public static Map<String, String> tablePayload(String catalogId, String tableUuid) {
    String catalog = Ids.requireCatalogId(catalogId);
    String uuid = checkUuid(tableUuid);
    return Map.of(CATALOG, catalog, TABLE_UUID, uuid, Task.EXCLUSIVE_GROUP, catalog + "/" + uuid);
  }

  /** The catalog id of a per-table task. */
  public static String catalogOf(Task task) {
    return required(task, CATALOG);
  }

  /** The table UUID of a per-table task. */
  public static String tableUuidOf(Task task) {
    return required(task, TABLE_UUID);
  }

  private static String key(String kind, String catalogId, String tableUuid) {
    return kind + "/" + Ids.requireCatalogId(catalogId) + "/" + checkUuid(tableUuid);
  }

  private static String checkUuid(String tableUuid) {
    try {
      return UUID.fromString(tableUuid).toString();
    } catch (IllegalArgumentException | NullPointerException e) {
      throw SeException.invalid("table uuid '%s' is not a UUID", tableUuid);
    }
  }

  private static String required(Task task, String field) {
    String value = task.payload().get(field);
    if (value == null) {
      throw SeException.invalid("task '%s' has no payload field '%s'", task.key(), field);
    }
    return value;
  }
}
