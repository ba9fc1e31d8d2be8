package io.storageengine.objectstore;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Mutual exclusion per key between every thread of every process on one host that uses the
 * same fs store directory.
 *
 * <p>Keys hash onto a fixed number of stripes, each a lock file in the store's lock directory,
 * so the number of lock files stays bounded however many keys there are. A stripe is held by
 * first taking an in-JVM lock and then an exclusive {@link FileLock} on its file: file locks
 * belong to the whole process (a second lock from the same JVM fails with
 * {@code OverlappingFileLockException} instead of waiting), so threads must queue in the JVM
 * first. The in-JVM locks are static, keyed by lock file, because two store instances on one
 * directory inside one JVM must exclude each other too.
 */
final class FileKeyLocks {
  private static final int STRIPES = 64;
  private static final Map<Path, ReentrantLock> JVM_LOCKS = new ConcurrentHashMap<>();

  /** An action run while holding a key's lock. */
  interface Locked<T> {
    T run() throws IOException;
  }

  private final Path lockDir;

  /** {@code lockDir} must be a real (symlink-free), existing directory. */
  FileKeyLocks(Path lockDir) {
    this.lockDir = lockDir;
  }

  <T> T withLock(String key, Locked<T> action) throws IOException {
    Path lockFile = lockDir.resolve("stripe-" + Math.floorMod(key.hashCode(), STRIPES) + ".lock");
    ReentrantLock jvmLock = JVM_LOCKS.computeIfAbsent(lockFile, f -> new ReentrantLock());
    jvmLock.lock();
    try (FileChannel channel =
            FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock ignored = channel.lock()) {
      return action.run();
    } finally {
      jvmLock.unlock();
    }
  }
}
