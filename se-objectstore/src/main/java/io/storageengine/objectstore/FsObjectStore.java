package io.storageengine.objectstore;

import com.sun.nio.file.ExtendedOpenOption;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An object store in a local directory: key {@code a/b/c} is the file {@code <root>/a/b/c}.
 *
 * <p>How it keeps the {@link ObjectStore} contract, also between processes on one host:
 * <ul>
 *   <li>Every write first goes to a new temp file in {@code <root>/.tmp}, is fsynced, and is
 *       then published in one step (rename or hard link), so readers never see partial
 *       content; the parent directory is fsynced after publishing. Blobs of a MiB or more
 *       (WAL segments) are written with O_DIRECT where the file system allows it, see
 *       {@link #writeTemp}.</li>
 *   <li>{@link #putIfAbsent} publishes with {@link Files#createLink}, which the kernel refuses
 *       when the key exists: atomic against any process, with no lock and no check-then-move.</li>
 *   <li>{@link #put}, {@link #putIfMatch} and {@link #delete} hold the key's lock
 *       ({@link FileKeyLocks}: in-JVM lock plus a file lock in {@code <root>/.locks}) while
 *       they look at and replace the file, so a compare-and-swap cannot lose an update made
 *       by another thread or process.</li>
 *   <li>The etag is the hex MD5 of the content, as S3 gives for simple uploads.</li>
 *   <li>Blobs are created with mode 0600 (owner read and write only) where the file system has
 *       POSIX permissions: cluster storage holds tenants' data and secrets and is the engine's
 *       own. The temp file is created so, so a blob is never readable by others, not even briefly.</li>
 * </ul>
 *
 * <p>Limits of a directory tree: a key cannot be both a blob and the parent of other keys
 * ({@code a} and {@code a/b}); {@code .tmp} and {@code .locks} are reserved first segments;
 * the file system must support hard links. Empty directories left by deletes are kept.
 */
public final class FsObjectStore implements ObjectStore {
  static final String TEMP_DIR = ".tmp";
  static final String LOCK_DIR = ".locks";
  /** Temp files older than this are left over by crashed writers and removed at open. */
  private static final Duration STALE_TEMP_AGE = Duration.ofHours(1);
  /** Size of one write call, see {@link #writeTemp}; a multiple of every usable block size. */
  private static final int WRITE_CHUNK_BYTES = 1 << 20;
  /** Blobs at least this large are digested aside and written with O_DIRECT, see {@link #writeTemp}. */
  static final int LARGE_BLOB_BYTES = 1 << 20;
  private static final int MAX_POOLED_DIRECT_BUFFERS = 4;
  private static final byte[] ZEROS = new byte[64 * 1024];
  private static final Logger LOG = LoggerFactory.getLogger(FsObjectStore.class);

  private final Path root;
  private final Path tempDir;
  private final FileKeyLocks locks;
  private final FileEtagCache etags = new FileEtagCache();
  /** Aligned chunk buffers of direct writes, reused: direct memory is only freed by the GC. */
  private final ConcurrentLinkedQueue<ByteBuffer> directBuffers = new ConcurrentLinkedQueue<>();
  private final int directBlockSize;
  private volatile boolean directWrites;
  /** Mode 0600 for every blob (created so, as its temp file), where the file system has POSIX permissions. */
  private final FileAttribute<?>[] ownerOnly;
  /** Digests large blobs while they are written; this store's own, idle threads end, shut down by {@link #close}. */
  private final ExecutorService digests = Executors.newCachedThreadPool(runnable -> {
    Thread thread = new Thread(runnable, "se-fs-digest");
    thread.setDaemon(true);
    return thread;
  });

  /** Opens (creating if needed) the store in directory {@code root}. */
  public FsObjectStore(Path root) {
    try {
      Files.createDirectories(root);
      this.root = root.toRealPath();
      this.tempDir = Files.createDirectories(this.root.resolve(TEMP_DIR));
      this.locks = new FileKeyLocks(Files.createDirectories(this.root.resolve(LOCK_DIR)));
      this.directBlockSize = directBlockSize(tempDir);
      this.directWrites = directBlockSize > 0;
      this.ownerOnly = this.root.getFileSystem().supportedFileAttributeViews().contains("posix")
          ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))}
          : new FileAttribute<?>[0];
    } catch (IOException | InvalidPathException e) {
      throw new SeException(
          ErrorCode.UNAVAILABLE,
          String.format("fs object store: cannot open directory '%s' (%s)", root, reason(e)),
          e);
    }
    removeStaleTemps();
  }

  @Override
  public Optional<Blob> get(String key) {
    Path file = pathOf(key);
    try {
      byte[] data = Files.readAllBytes(file);
      return Optional.of(new Blob(data, Md5.hex(data)));
    } catch (IOException e) {
      if (isMissing(e) || Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS)) {
        return Optional.empty();
      }
      throw failure("read", key, e);
    }
  }

  @Override
  public Optional<byte[]> getRange(String key, long offset, int length) {
    Path file = pathOf(key);
    Keys.checkRange(key, offset, length);
    if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
      return Optional.empty();
    }
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      long available = Math.max(0, channel.size() - offset);
      ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(length, available));
      while (buffer.hasRemaining()) {
        if (channel.read(buffer, offset + buffer.position()) < 0) {
          break;
        }
      }
      return Optional.of(buffer.position() == buffer.capacity()
          ? buffer.array() : Arrays.copyOf(buffer.array(), buffer.position()));
    } catch (IOException e) {
      if (isMissing(e)) {
        return Optional.empty();
      }
      throw failure("read", key, e);
    }
  }

  @Override
  public Optional<ObjectInfo> head(String key) {
    Path file = pathOf(key);
    try {
      return etags.info(file).map(info -> new ObjectInfo(key, info.size(), info.etag(), info.modified()));
    } catch (IOException e) {
      throw failure("read", key, e);
    }
  }

  @Override
  public String put(String key, byte[] data) {
    Path target = pathOf(key);
    TempFile temp = writeTemp(key, Keys.checkData(key, data));
    try {
      return locked(key, () -> {
        createParents(key, target);
        rejectDirectory(key, target);
        Files.move(temp.path(), target, StandardCopyOption.ATOMIC_MOVE);
        syncDirectory(target.getParent());
        return temp.etag();
      });
    } finally {
      deleteQuietly(temp.path());
    }
  }

  @Override
  public Optional<String> putIfAbsent(String key, byte[] data) {
    Path target = pathOf(key);
    TempFile temp = writeTemp(key, Keys.checkData(key, data));
    try {
      createParents(key, target);
      try {
        Files.createLink(target, temp.path());
      } catch (FileAlreadyExistsException e) {
        rejectDirectory(key, target);
        return Optional.empty();
      }
      syncDirectory(target.getParent());
      return Optional.of(temp.etag());
    } catch (IOException e) {
      throw failure("write", key, e);
    } finally {
      deleteQuietly(temp.path());
    }
  }

  @Override
  public Optional<String> putIfMatch(String key, byte[] data, String etag) {
    Path target = pathOf(key);
    Keys.checkData(key, data);
    if (etag == null) {
      return Optional.empty();
    }
    return locked(key, () -> {
      // Read the content itself rather than trust the etag cache: this comparison is what
      // makes the swap safe, and the lock guarantees nobody replaces the file meanwhile.
      byte[] current;
      try {
        current = Files.readAllBytes(target);
      } catch (IOException e) {
        if (isMissing(e) || Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
          return Optional.empty();
        }
        throw e;
      }
      if (!Md5.hex(current).equals(etag)) {
        return Optional.empty();
      }
      // The temp file is written only once the swap is known to proceed, so that losers of
      // a race do not pay for a write and an fsync.
      TempFile temp = writeTemp(key, data);
      try {
        Files.move(temp.path(), target, StandardCopyOption.ATOMIC_MOVE);
        syncDirectory(target.getParent());
        return Optional.of(temp.etag());
      } finally {
        deleteQuietly(temp.path());
      }
    });
  }

  @Override
  public List<ObjectInfo> list(String prefix) {
    Keys.checkPrefix(prefix);
    Optional<Path> start = listStart(prefix);
    if (start.isEmpty()) {
      return List.of();
    }
    List<String> keys = new ArrayList<>();
    try {
      Files.walkFileTree(start.get(), new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
          if (dir.equals(tempDir) || dir.getParent() != null && dir.getParent().equals(root)
              && dir.getFileName().toString().equals(LOCK_DIR)) {
            return FileVisitResult.SKIP_SUBTREE;
          }
          String dirKey = keyOf(dir) + "/";
          boolean related = dir.equals(root) || dirKey.startsWith(prefix) || prefix.startsWith(dirKey);
          return related ? FileVisitResult.CONTINUE : FileVisitResult.SKIP_SUBTREE;
        }

        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
          String key = keyOf(file);
          if (attrs.isRegularFile() && key.startsWith(prefix) && isValidKey(key)) {
            keys.add(key);
          }
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
          if (isMissing(e)) {
            return FileVisitResult.CONTINUE; // deleted while we walked
          }
          throw e;
        }
      });
      // Sort whole keys, not directory entries: "a/b-c" sorts before "a/b/c" ('-' < '/').
      keys.sort(Comparator.naturalOrder());
      List<ObjectInfo> out = new ArrayList<>(keys.size());
      for (String key : keys) {
        etags.info(root.resolve(key))
            .ifPresent(info -> out.add(new ObjectInfo(key, info.size(), info.etag(), info.modified())));
      }
      return out;
    } catch (IOException e) {
      throw new SeException(ErrorCode.UNAVAILABLE,
          String.format("fs object store: cannot list prefix '%s' (%s)", prefix, reason(e)), e);
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>Reads the one directory the prefix ends in. A subdirectory is a directory of the answer
   * only when a blob lies somewhere below it (found by a walk that stops at the first one):
   * deletes leave empty directories behind, and those hold no key.
   */
  @Override
  public Children listChildren(String prefix) {
    Keys.checkPrefix(prefix);
    Optional<Path> start = listStart(prefix);
    if (start.isEmpty()) {
      return Children.EMPTY;
    }
    Path dir = start.get();
    List<String> objectKeys = new ArrayList<>();
    List<String> directories = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        if (dir.equals(root) && (name.equals(TEMP_DIR) || name.equals(LOCK_DIR))) {
          continue;
        }
        String key = keyOf(entry);
        if (!key.startsWith(prefix) || !isValidKey(key)) {
          continue;
        }
        Optional<BasicFileAttributes> attrs = attributes(entry);
        if (attrs.isPresent() && attrs.get().isRegularFile()) {
          objectKeys.add(key);
        } else if (attrs.isPresent() && attrs.get().isDirectory() && holdsABlob(entry)) {
          directories.add(key + "/");
        }
      }
      objectKeys.sort(Comparator.naturalOrder());
      directories.sort(Comparator.naturalOrder());
      List<ObjectInfo> objects = new ArrayList<>(objectKeys.size());
      for (String key : objectKeys) {
        etags.info(root.resolve(key))
            .ifPresent(info -> objects.add(new ObjectInfo(key, info.size(), info.etag(), info.modified())));
      }
      return new Children(objects, directories);
    } catch (IOException e) {
      if (isMissing(e)) {
        return Children.EMPTY; // the directory was removed while we looked
      }
      throw new SeException(ErrorCode.UNAVAILABLE,
          String.format("fs object store: cannot list prefix '%s' (%s)", prefix, reason(e)), e);
    }
  }

  /** The entry's own attributes (a link is not followed), or empty when it is gone. */
  private static Optional<BasicFileAttributes> attributes(Path entry) throws IOException {
    try {
      return Optional.of(Files.readAttributes(entry, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS));
    } catch (IOException e) {
      if (isMissing(e)) {
        return Optional.empty();
      }
      throw e;
    }
  }

  /** True when a blob (a regular file with a valid key) lies somewhere below {@code dir}. */
  private boolean holdsABlob(Path dir) throws IOException {
    boolean[] found = {false};
    Files.walkFileTree(dir, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
        if (attrs.isRegularFile() && isValidKey(keyOf(file))) {
          found[0] = true;
          return FileVisitResult.TERMINATE;
        }
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
        if (isMissing(e)) {
          return FileVisitResult.CONTINUE; // deleted while we walked
        }
        throw e;
      }
    });
    return found[0];
  }

  @Override
  public void delete(String key) {
    Path target = pathOf(key);
    locked(key, () -> {
      // Only blobs are deleted: a directory here is the parent of other keys, not a key.
      if (Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS)) {
        Files.deleteIfExists(target);
        syncDirectory(target.getParent());
      }
      return null;
    });
  }

  @Override
  public String describe() {
    return "fs:" + root;
  }

  /** True when an I/O failure means "no such blob" (also when a parent is a plain file). */
  static boolean isMissing(IOException e) {
    return e instanceof NoSuchFileException
        || e instanceof NotDirectoryException
        || e instanceof FileSystemException fse && "Not a directory".equals(fse.getReason());
  }

  private Path pathOf(String key) {
    Keys.check(key);
    String first = key.substring(0, key.indexOf('/') < 0 ? key.length() : key.indexOf('/'));
    if (first.equals(TEMP_DIR) || first.equals(LOCK_DIR)) {
      throw SeException.invalid(
          "invalid object key '%s': the fs object store reserves '%s/'", key, first);
    }
    try {
      return root.resolve(key);
    } catch (InvalidPathException e) {
      throw SeException.invalid("invalid object key '%s': not a valid file name here", key);
    }
  }

  /** The directory to walk for {@code prefix}, or empty when no key can start with it. */
  private Optional<Path> listStart(String prefix) {
    int slash = prefix.lastIndexOf('/');
    if (slash < 0) {
      return Optional.of(root);
    }
    String dirPart = prefix.substring(0, slash);
    if (!isValidKey(dirPart) || dirPart.equals(TEMP_DIR) || dirPart.startsWith(TEMP_DIR + "/")
        || dirPart.equals(LOCK_DIR) || dirPart.startsWith(LOCK_DIR + "/")) {
      return Optional.empty();
    }
    try {
      Path dir = root.resolve(dirPart);
      return Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS) ? Optional.of(dir) : Optional.empty();
    } catch (InvalidPathException e) {
      return Optional.empty();
    }
  }

  private String keyOf(Path path) {
    StringBuilder key = new StringBuilder();
    for (Path name : root.relativize(path)) {
      if (key.length() > 0) {
        key.append('/');
      }
      key.append(name);
    }
    return key.toString();
  }

  private static boolean isValidKey(String key) {
    try {
      Keys.check(key);
      return true;
    } catch (SeException e) {
      return false;
    }
  }

  /** A written and fsynced temp file, and the etag of its content. */
  private record TempFile(Path path, String etag) {}

  /**
   * Writes {@code data} to a new temp file and fsyncs it, and digests its etag.
   *
   * <p>Blobs of at least {@link #LARGE_BLOB_BYTES} (WAL segments of tens of MiB) take another
   * path, because the time of their put is what a group commit waits for: the MD5 (the most CPU
   * of the put) runs on a digest thread while this one writes, and the write uses O_DIRECT where
   * the file system allows it. A buffered write of a 64 MiB segment costs about ten times the
   * CPU of a direct one on the development machine (the kernel copies every page into the page
   * cache, often reclaiming others first), and the fsync after it writes the same bytes anyway.
   * Durability is unchanged: the file is fsynced before it is published either way.
   */
  private TempFile writeTemp(String key, byte[] data) {
    if (data.length < LARGE_BLOB_BYTES) {
      return new TempFile(writeBuffered(key, data), Md5.hex(data));
    }
    CompletableFuture<String> etag = digestAside(data);
    Path temp = null;
    if (directWrites) {
      temp = tempDir.resolve(UUID.randomUUID() + ".tmp");
      try {
        writeDirect(temp, data);
      } catch (IOException | UnsupportedOperationException e) {
        // A real disk error (full, failing) shows up again in the buffered write below and is
        // reported from there; only a refusal of O_DIRECT itself turns direct writes off.
        deleteQuietly(temp);
        temp = null;
        if (refusesDirectIo(e)) {
          directWrites = false;
          LOG.info("fs object store {}: direct writes unavailable ({}), using buffered writes",
              describe(), e.toString());
        }
      }
    }
    if (temp == null) {
      temp = writeBuffered(key, data);
    }
    return new TempFile(temp, etag.join());
  }

  /**
   * True when the file system does not take O_DIRECT: the JDK refuses the option, or the kernel
   * answers EINVAL (tmpfs before Linux 6.6, some FUSE and network file systems).
   */
  /** The MD5 of {@code data} on a digest thread; on this one once the store is closed. */
  private CompletableFuture<String> digestAside(byte[] data) {
    try {
      return CompletableFuture.supplyAsync(() -> Md5.hex(data), digests);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.completedFuture(Md5.hex(data));
    }
  }

  /** Stops the digest threads; a write after closing digests on the writing thread. */
  @Override
  public void close() {
    digests.shutdown();
  }

  private static boolean refusesDirectIo(Exception e) {
    String message = e instanceof FileSystemException fse ? fse.getReason() : e.getMessage();
    return e instanceof UnsupportedOperationException
        || message != null && message.contains("Invalid argument");
  }

  private Path writeBuffered(String key, byte[] data) {
    Path temp = tempDir.resolve(UUID.randomUUID() + ".tmp");
    try (FileChannel channel =
        FileChannel.open(temp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), ownerOnly)) {
      // Chunks: the JDK copies a heap buffer into a temporary direct buffer of the same size
      // before each write call, and keeps it per thread; a segment-sized one would stay around.
      for (int offset = 0; offset < data.length; offset += WRITE_CHUNK_BYTES) {
        ByteBuffer chunk = ByteBuffer.wrap(data, offset,
            Math.min(WRITE_CHUNK_BYTES, data.length - offset));
        while (chunk.hasRemaining()) {
          channel.write(chunk);
        }
      }
      channel.force(true);
      return temp;
    } catch (IOException e) {
      deleteQuietly(temp);
      throw failure("write", key, e);
    }
  }

  /**
   * Writes {@code data} to the new file {@code temp} with O_DIRECT and fsyncs it. O_DIRECT needs
   * block-aligned buffers, offsets and lengths: the last chunk is padded with zeros and the file
   * then truncated to the exact size (before the fsync, so that the size is durable too).
   */
  private void writeDirect(Path temp, byte[] data) throws IOException {
    ByteBuffer buffer = directBuffers.poll();
    if (buffer == null) {
      buffer = ByteBuffer.allocateDirect(WRITE_CHUNK_BYTES + directBlockSize)
          .alignedSlice(directBlockSize);
    }
    try (FileChannel channel = FileChannel.open(temp, Set.of(StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT), ownerOnly)) {
      for (int offset = 0; offset < data.length; offset += WRITE_CHUNK_BYTES) {
        int length = Math.min(WRITE_CHUNK_BYTES, data.length - offset);
        buffer.clear();
        buffer.put(data, offset, length);
        buffer.put(ZEROS, 0, (directBlockSize - length % directBlockSize) % directBlockSize);
        buffer.flip();
        while (buffer.hasRemaining()) {
          channel.write(buffer);
        }
      }
      if (channel.size() != data.length) {
        channel.truncate(data.length);
      }
      channel.force(true);
    } finally {
      if (directBuffers.size() < MAX_POOLED_DIRECT_BUFFERS) {
        directBuffers.offer(buffer);
      }
    }
  }

  /** The block size O_DIRECT needs in {@code dir}, or 0 when direct writes cannot be used. */
  private static int directBlockSize(Path dir) {
    try {
      long size = Files.getFileStore(dir).getBlockSize();
      boolean usable = size > 0 && size <= ZEROS.length && Long.bitCount(size) == 1
          && WRITE_CHUNK_BYTES % size == 0;
      return usable ? (int) size : 0;
    } catch (IOException | UnsupportedOperationException e) {
      return 0;
    }
  }

  private void createParents(String key, Path target) throws IOException {
    try {
      Files.createDirectories(target.getParent());
    } catch (FileAlreadyExistsException e) {
      throw SeException.invalid(
          "object key '%s' lies below an existing key: the fs object store cannot hold both", key);
    }
  }

  private static void rejectDirectory(String key, Path target) {
    if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
      throw SeException.invalid(
          "object key '%s' is the parent of other keys: the fs object store cannot hold both", key);
    }
  }

  /** Makes a rename or link inside {@code dir} durable. */
  private static void syncDirectory(Path dir) throws IOException {
    try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
      channel.force(true);
    }
  }

  private <T> T locked(String key, FileKeyLocks.Locked<T> action) {
    try {
      return locks.withLock(key, action);
    } catch (IOException e) {
      throw failure("write", key, e);
    }
  }

  private void removeStaleTemps() {
    Instant cutoff = Instant.now().minus(STALE_TEMP_AGE);
    try (DirectoryStream<Path> temps = Files.newDirectoryStream(tempDir)) {
      for (Path temp : temps) {
        try {
          if (Files.getLastModifiedTime(temp).toInstant().isBefore(cutoff)) {
            Files.deleteIfExists(temp);
          }
        } catch (IOException e) {
          // Another process may clean up at the same time; a leftover temp file is harmless.
        }
      }
    } catch (IOException e) {
      // Cleanup is best effort: the store works with stale temp files present.
    }
  }

  private static void deleteQuietly(Path temp) {
    try {
      Files.deleteIfExists(temp);
    } catch (IOException e) {
      // Best effort: removeStaleTemps will find it later.
    }
  }

  /** An UNAVAILABLE error naming the key and the OS reason, never the store's absolute path. */
  private static SeException failure(String action, String key, Exception e) {
    return new SeException(ErrorCode.UNAVAILABLE,
        String.format("fs object store: cannot %s key '%s' (%s)", action, key, reason(e)), e);
  }

  private static String reason(Exception e) {
    if (e instanceof FileSystemException fse && fse.getReason() != null) {
      return fse.getReason();
    }
    return e.getClass().getSimpleName();
  }
}
