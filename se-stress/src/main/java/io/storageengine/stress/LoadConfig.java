package io.storageengine.stress;

import io.storageengine.common.SeException;

/**
 * What a load run writes.
 *
 * @param catalogId the tenant
 * @param namespace namespace of the tables (dot-separated levels)
 * @param tablePrefix tables are {@code <prefix>_<mode>_<i>}
 * @param tables how many tables
 * @param entity entity tables (upserts and deletes by key) instead of append tables
 * @param rowBytes approximate payload bytes per row
 * @param keySpace entity: distinct keys
 * @param updateRatio entity: share of upserts that update an existing key
 * @param deleteRatio entity: share of operations that delete a key
 * @param concurrency producers per table
 * @param rate total rows per second over every producer; 0 = as fast as possible
 * @param batchRows rows per batch
 * @param window unacknowledged batches per producer
 * @param seed seed of the producers' random choices
 */
record LoadConfig(String catalogId, String namespace, String tablePrefix, int tables,
    boolean entity, int rowBytes, long keySpace, double updateRatio, double deleteRatio,
    int concurrency, long rate, int batchRows, int window, long seed, boolean pointProbe) {

  LoadConfig {
    positive("--tables", tables);
    positive("--concurrency", concurrency);
    positive("--batch-rows", batchRows);
    positive("--key-space", keySpace);
    positive("--window", window);
    if (window > 30) {
      throw SeException.invalid("--window: at most 30 unacknowledged batches, got %d", window);
    }
    if (rowBytes < 0 || rowBytes > 60_000) {
      throw SeException.invalid("--row-bytes: expected 0..60000, got %d", rowBytes);
    }
    if (rate < 0) {
      throw SeException.invalid("--rate: expected rows per second >= 0, got %d", rate);
    }
    ratio("--update-ratio", updateRatio);
    ratio("--delete-ratio", deleteRatio);
    if (!entity && (updateRatio > 0 || deleteRatio > 0)) {
      throw SeException.invalid("--update-ratio and --delete-ratio apply to --mode entity only");
    }
    if (pointProbe && !entity) {
      throw SeException.invalid("--probe point applies to --mode entity only");
    }
    if (namespace.isBlank() || tablePrefix.isBlank()) {
      throw SeException.invalid("--namespace and --table-prefix must not be blank");
    }
  }

  String mode() {
    return entity ? "entity" : "append";
  }

  private static void positive(String option, long value) {
    if (value <= 0) {
      throw SeException.invalid("%s: must be positive, got %d", option, value);
    }
  }

  private static void ratio(String option, double value) {
    if (!(value >= 0 && value <= 1)) {
      throw SeException.invalid("%s: expected 0..1, got %s", option, value);
    }
  }
}
