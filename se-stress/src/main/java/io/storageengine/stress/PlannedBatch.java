package io.storageengine.stress;

import io.storageengine.wal.WalOperation;

/**
 * One batch a producer is about to send: its operation and, per row, the row id (append tables)
 * or the key and the unique version (entity tables).
 *
 * @param operation the stream it goes to
 * @param producer index of the producer that sends it
 * @param ids append: the row ids; entity: the keys
 * @param versions entity: each row's version (unique in the run); null for append tables
 * @param freshnessMark the largest value of the probed column this batch writes, or -1 when the
 *     batch writes nothing the freshness probe can see (deletes)
 * @param payloadBytes payload bytes of the batch, for the MB/s figure
 */
record PlannedBatch(WalOperation operation, int producer, long[] ids, long[] versions,
    long freshnessMark, long payloadBytes) {

  int rows() {
    return ids.length;
  }
}
