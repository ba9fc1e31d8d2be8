package io.storageengine.reconcile;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The plain in-memory model of an entity table (ARCHITECTURE.md 5): rows by key plus
 * tombstones. A reconcile applies the operations of its WAL range in (version, arrival) order;
 * an operation below the key's current or tombstone version is ignored.
 */
final class EntityModel {
  /** One operation: upsert carrying {@code values} (column -> value, only carried columns), or delete. */
  record Op(boolean delete, long key, long version, Map<String, Object> values) {}

  final Map<Long, Map<String, Object>> rows = new HashMap<>();
  final Map<Long, Long> tombstones = new HashMap<>();
  private final List<String> columns;

  EntityModel(List<String> nonKeyColumns) {
    this.columns = nonKeyColumns;
  }

  void applyBatch(List<Op> arrivalOrder) {
    List<Op> sorted = new ArrayList<>(arrivalOrder);
    sorted.sort(Comparator.comparingLong(Op::version)); // stable: ties keep arrival order
    for (Op op : sorted) {
      Map<String, Object> row = rows.get(op.key());
      long current = Math.max(row == null ? Long.MIN_VALUE : (Long) row.get("ver"),
          tombstones.getOrDefault(op.key(), Long.MIN_VALUE));
      if (op.version() < current) {
        continue;
      }
      if (op.delete()) {
        rows.remove(op.key());
        tombstones.put(op.key(), op.version());
        continue;
      }
      Map<String, Object> next = new HashMap<>();
      for (String c : columns) {
        next.put(c, row == null ? null : row.get(c));
      }
      next.putAll(op.values());
      next.put("ver", op.version());
      rows.put(op.key(), next);
    }
  }

  Set<Long> keys() {
    return rows.keySet();
  }
}
