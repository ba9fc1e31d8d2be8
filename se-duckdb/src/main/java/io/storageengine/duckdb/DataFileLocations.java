package io.storageengine.duckdb;

import java.nio.file.Path;

/** Where a data file location is on this machine, when it is. */
public final class DataFileLocations {
  private DataFileLocations() {}

  /**
   * The local path of a {@code file:} or plain-path location, or null for remote storage.
   * The path is taken literally, not URI-decoded: Hadoop's local FileIO stores a partition
   * directory such as {@code s=a%C3%A9} under exactly that name.
   */
  public static Path localPath(String location) {
    if (location.startsWith("file://")) {
      return Path.of(location.substring("file://".length()));
    }
    if (location.startsWith("file:")) {
      return Path.of(location.substring("file:".length()));
    }
    if (location.startsWith("/")) {
      return Path.of(location);
    }
    return null;
  }
}
