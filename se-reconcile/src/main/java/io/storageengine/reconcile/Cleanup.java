package io.storageengine.reconcile;

import java.util.List;
import org.apache.iceberg.io.FileIO;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Deletes files of an attempt that is known not to have committed. */
public final class Cleanup {
  private static final Logger LOG = LoggerFactory.getLogger(Cleanup.class);

  private Cleanup() {}

  public static void deleteQuietly(FileIO io, List<String> locations) {
    for (String location : locations) {
      try {
        io.deleteFile(location);
      } catch (RuntimeException e) {
        // An orphan file is harmless (never referenced); orphan cleanup removes it later.
        LOG.debug("could not delete uncommitted file {}", location);
      }
    }
  }
}
