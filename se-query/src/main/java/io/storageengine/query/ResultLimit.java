package io.storageengine.query;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Counts the rows and Arrow bytes of one result as its batches are sent and refuses the batch
 * that would take it past {@link QueryLimits#maxResultRows} or {@link QueryLimits#maxResultBytes}
 * (RESOURCE_EXHAUSTED naming the limit), so a client never gets a result cut short silently.
 */
final class ResultLimit {
  private final long maxRows;
  private final long maxBytes;
  private long rows;
  private long bytes;

  ResultLimit(QueryLimits limits) {
    this.maxRows = limits.maxResultRows();
    this.maxBytes = limits.maxResultBytes();
  }

  /** Counts the batch in {@code root}, about to be sent; throws when it would exceed a limit. */
  void add(VectorSchemaRoot root) {
    rows += root.getRowCount();
    if (rows > maxRows) {
      throw new SeException(ErrorCode.RESOURCE_EXHAUSTED, String.format("result has more than %d rows, the "
          + "server's limit (--query.max-result-rows): add a LIMIT or a filter, or aggregate", maxRows));
    }
    for (FieldVector vector : root.getFieldVectors()) {
      bytes += vector.getBufferSize();
    }
    if (bytes > maxBytes) {
      throw new SeException(ErrorCode.RESOURCE_EXHAUSTED, String.format("result is more than %d bytes, the "
          + "server's limit (--query.max-result-bytes): select fewer columns or rows", maxBytes));
    }
  }
}
