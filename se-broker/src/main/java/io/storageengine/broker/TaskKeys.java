package io.storageengine.broker;

import io.storageengine.common.Ids;
import io.storageengine.common.SeException;
import java.util.Map;
import java.util.UUID;

/** Keys, kinds and payloads of the engine's task kinds: one task per (kind, table). */
public final class TaskKeys {
  public static final String RECONCILE = "reconcile";
  /** One slice of a sliced entity table: different slices of one table run at once. */
  public static final String RECONCILE_SLICE = "reconcile-slice";
  public static final String SLICE = "slice";
  public static final String MAINTAIN = "maintain";
  public static final String CATALOG = "catalog";
  public static final String TABLE_UUID = "table_uuid";

  private TaskKeys() {}

  /** {@code reconcile/<catalog>/<table-uuid>}. */
  public static String reconcileKey(String catalogId, String tableUuid) {
    return key(RECONCILE, catalogId, tableUuid);
  }

  /** {@code reconcile-slice/<catalog>/<table-uuid>/<slice id>}. */
  public static String reconcileSliceKey(String catalogId, String tableUuid, int sliceId) {
    return key(RECONCILE_SLICE, catalogId, tableUuid) + "/" + checkSlice(sliceId);
  }

  /**
   * The payload of a slice task: {@code {catalog, table_uuid, slice, exclusive_group}}; the group
   * is {@code <catalog>/<table-uuid>/slice/<id>}, so one slice never runs twice at once while
   * different slices of the table do.
   */
  public static Map<String, String> slicePayload(String catalogId, String tableUuid, int sliceId) {
    String catalog = Ids.requireCatalogId(catalogId);
    String uuid = checkUuid(tableUuid);
    String slice = Integer.toString(checkSlice(sliceId));
    return Map.of(CATALOG, catalog, TABLE_UUID, uuid, SLICE, slice,
        Task.EXCLUSIVE_GROUP, catalog + "/" + uuid + "/slice/" + slice);
  }

  /** The slice id of a slice task. */
  public static int sliceOf(Task task) {
    try {
      return checkSlice(Integer.parseInt(required(task, SLICE)));
    } catch (NumberFormatException e) {
      throw SeException.invalid("task '%s' has slice '%s', not a slice id", task.key(), task.payload().get(SLICE));
    }
  }

  private static int checkSlice(int sliceId) {
    if (sliceId < 0) {
      throw SeException.invalid("slice id %d is negative", sliceId);
    }
    return sliceId;
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
