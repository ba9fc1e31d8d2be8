package io.storageengine.query;

import org.apache.iceberg.DataFile;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Scan plans of pinned table snapshots, least recently used evicted first. A snapshot never
 * changes, so the files (and deleted positions) Iceberg plans for it with a given pruning filter
 * stay right for as long as the snapshot exists; a commit makes a new snapshot id and so a new
 * key. Only the resolution of the current snapshot ({@code loadTable}) runs per query. Bounded by
 * entries and by weight (data files plus deleted positions held).
 */
final class SnapshotPlanCache {
  static final int DEFAULT_MAX_ENTRIES = 256;
  /** About 32 MB of deleted positions, or a million files. */
  static final long DEFAULT_MAX_WEIGHT = 4_000_000L;

  /** What identifies a plan: tenant, table, snapshot, read schema and the pruning filter. */
  record Key(String catalogId, String tableUuid, String tableLocation, long snapshotId, int schemaId, String filter) {}

  /**
   * A data file of the snapshot, by its table location; {@code deletedPositions} sorted, possibly
   * empty; its row lineage: {@code firstRowId} (null when the file has none) and the data
   * sequence number of its manifest entry (null when unknown).
   */
  record ScanFile(String location, long[] deletedPositions, Long firstRowId, Long dataSequenceNumber) {
    ScanFile(String location, long[] deletedPositions) {
      this(location, deletedPositions, null, null);
    }
  }

  /** The planned files of one snapshot. */
  static final class Plan {
    final List<ScanFile> files;
    final boolean hasDeletes;
    final long weight;
    /**
     * Whether DuckDB may read these files by column name (null until checked): decided by the
     * first query that sets the snapshot up, remembered for the others.
     */
    volatile Boolean readsByName;
    /**
     * The Iceberg data files of {@link #files} (same order, with their column statistics) when
     * the plan is kept to prune other filters' plans of the snapshot from, in memory; else null.
     */
    final List<DataFile> dataFiles;

    Plan(List<ScanFile> files) {
      this(files, null);
    }

    Plan(List<ScanFile> files, List<DataFile> dataFiles) {
      if (dataFiles != null && dataFiles.size() != files.size()) {
        throw new IllegalArgumentException("one data file per planned file");
      }
      this.dataFiles = dataFiles == null ? null : List.copyOf(dataFiles);
      this.files = List.copyOf(files);
      long positions = 0;
      boolean deletes = false;
      for (ScanFile file : files) {
        positions += file.deletedPositions().length;
        deletes |= file.deletedPositions().length > 0;
      }
      this.hasDeletes = deletes;
      this.weight = 1 + files.size() + positions;
    }
  }

  private final int maxEntries;
  private final long maxWeight;
  private final LinkedHashMap<Key, Plan> plans = new LinkedHashMap<>(16, 0.75f, true);
  private long weight;
  private long hits;
  private long misses;

  SnapshotPlanCache() {
    this(DEFAULT_MAX_ENTRIES, DEFAULT_MAX_WEIGHT);
  }

  SnapshotPlanCache(int maxEntries, long maxWeight) {
    this.maxEntries = maxEntries;
    this.maxWeight = maxWeight;
  }

  /** The cached plan of {@code key}, or null. */
  synchronized Plan get(Key key) {
    Plan plan = plans.get(key);
    if (plan == null) {
      misses++;
    } else {
      hits++;
    }
    return plan;
  }

  /** The cached plan of {@code key}, or null, not counted as a hit or miss (a planner's own lookup). */
  synchronized Plan peek(Key key) {
    return plans.get(key);
  }

  /** Caches {@code plan} unless it alone is heavier than the budget; returns the plan to use. */
  synchronized Plan put(Key key, Plan plan) {
    Plan existing = plans.get(key);
    if (existing != null) {
      return existing;
    }
    if (plan.weight > maxWeight) {
      return plan;
    }
    plans.put(key, plan);
    weight += plan.weight;
    Iterator<Map.Entry<Key, Plan>> it = plans.entrySet().iterator();
    while ((plans.size() > maxEntries || weight > maxWeight) && it.hasNext()) {
      weight -= it.next().getValue().weight;
      it.remove();
    }
    return plan;
  }

  synchronized long hits() {
    return hits;
  }

  synchronized long misses() {
    return misses;
  }

  synchronized int size() {
    return plans.size();
  }

  /** The cached plans, least recently used first (for tests). */
  synchronized List<Plan> plans() {
    return List.copyOf(plans.values());
  }
}
