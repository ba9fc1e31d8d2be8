package io.storageengine.objectstore;

import io.storageengine.common.LruMap;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Remembers the MD5 of files so that {@code head} and {@code list} do not re-read every blob.
 *
 * <p>The fs store never rewrites a file in place: every write publishes a new file (a new
 * inode) by rename or link. So a file's identity (inode), size and modification time determine
 * its content, and a cached digest stays right for as long as those three match. Only the
 * compare-and-swap path does not trust this cache: it re-reads the content under the key lock.
 */
final class FileEtagCache {
  private static final int MAX_ENTRIES = 4096;

  private record Stamp(Object fileKey, long size, FileTime modified) {}

  /**
   * What {@link #info} returns: the size, etag and modification time of one and the same version
   * of a file.
   */
  record SizedEtag(long size, String etag, Instant modified) {}

  private final Map<Stamp, String> digests = new LruMap<>(MAX_ENTRIES);

  /** Size and MD5 of the regular file at {@code file}, or empty when it does not exist. */
  Optional<SizedEtag> info(Path file) throws IOException {
    while (true) {
      Optional<Stamp> before = stamp(file);
      if (before.isEmpty()) {
        return Optional.empty();
      }
      String cached = cached(before.get());
      if (cached != null) {
        return Optional.of(new SizedEtag(before.get().size(), cached, before.get().modified().toInstant()));
      }
      String digest;
      try {
        digest = Md5.hex(file);
      } catch (IOException e) {
        if (FsObjectStore.isMissing(e)) {
          return Optional.empty();
        }
        throw e;
      }
      // The file may have been replaced while it was read: keep the digest only if the stamp
      // did not move, otherwise read the new version.
      if (before.equals(stamp(file))) {
        remember(before.get(), digest);
        return Optional.of(new SizedEtag(before.get().size(), digest, before.get().modified().toInstant()));
      }
    }
  }

  private static Optional<Stamp> stamp(Path file) throws IOException {
    BasicFileAttributes attrs;
    try {
      attrs = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    } catch (IOException e) {
      if (FsObjectStore.isMissing(e)) {
        return Optional.empty();
      }
      throw e;
    }
    if (!attrs.isRegularFile()) {
      return Optional.empty();
    }
    Object identity = Objects.requireNonNullElse(attrs.fileKey(), file);
    return Optional.of(new Stamp(identity, attrs.size(), attrs.lastModifiedTime()));
  }

  private synchronized String cached(Stamp stamp) {
    // Without an inode (fileKey) the path stands in, which cannot tell versions apart.
    return stamp.fileKey() instanceof Path ? null : digests.get(stamp);
  }

  private synchronized void remember(Stamp stamp, String digest) {
    if (!(stamp.fileKey() instanceof Path)) {
      digests.put(stamp, digest);
    }
  }
}
