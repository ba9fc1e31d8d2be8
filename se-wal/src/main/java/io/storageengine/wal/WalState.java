package io.storageengine.wal;

/**
 * The table's {@code state.json}: every segment with seq {@code <= publishedSeq} is committed
 * to Iceberg; segments with seq {@code <= gcSeq} may be deleted. {@code gcSeq <= publishedSeq}.
 * Zero means "none". Changed only by compare-and-swap.
 */
public record WalState(long publishedSeq, long gcSeq) {
  public static final WalState EMPTY = new WalState(0, 0);
}
