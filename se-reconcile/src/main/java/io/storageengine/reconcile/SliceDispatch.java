package io.storageengine.reconcile;

import io.storageengine.wal.TableWal;
import java.util.List;

/**
 * Where a pass over a whole sliced table sends its slices instead of running them itself: in
 * distributed mode, one broker task per slice, so that different workers run them. Must not
 * run the passes inline; throwing fails the pass (nothing was committed).
 */
public interface SliceDispatch {
  /** Arranges one pass ({@link Reconciler#reconcileSlice}) for each of {@code sliceIds} of {@code table}. */
  void dispatch(TableWal table, List<Integer> sliceIds);
}
