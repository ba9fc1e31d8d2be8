package io.storageengine.objectstore;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Cluster storage: a flat namespace of immutable-until-replaced blobs addressed by
 * slash-separated keys ({@code tenants/c/tables/u/state.json}).
 *
 * <p>Semantics every backend guarantees:
 * <ul>
 *   <li>A successful {@code put*} is durable and visible to every later {@code get}, {@code head}
 *       and {@code list} from any process (read-after-write).</li>
 *   <li>{@link #putIfAbsent} and {@link #putIfMatch} are atomic: of N concurrent callers on one
 *       key, exactly one {@code putIfAbsent} creates it, and a {@code putIfMatch} succeeds only
 *       when the stored etag is still the given one (compare-and-swap; no update is lost).</li>
 *   <li>An etag is an opaque string that changes whenever the content of a key changes.</li>
 *   <li>There is no rename and no append. Readers never see a partially written blob.</li>
 *   <li>Failures of the storage itself are {@code SeException(UNAVAILABLE)}; the caller may
 *       retry. A put whose outcome is unknown (response lost) may or may not have happened.</li>
 * </ul>
 */
public interface ObjectStore extends AutoCloseable {

  /** The whole blob, or empty when the key does not exist. */
  Optional<Blob> get(String key);

  /** {@code length} bytes starting at {@code offset} (fewer at the end of the blob), or empty. */
  Optional<byte[]> getRange(String key, long offset, int length);

  /** Size and etag, or empty when the key does not exist. */
  Optional<ObjectInfo> head(String key);

  /** Creates or replaces the blob; returns its new etag. */
  String put(String key, byte[] data);

  /** Creates the blob only if the key does not exist: the new etag, or empty if it existed. */
  Optional<String> putIfAbsent(String key, byte[] data);

  /** Replaces the blob only if its current etag equals {@code etag}: the new etag, or empty. */
  Optional<String> putIfMatch(String key, byte[] data, String etag);

  /** Every key starting with {@code prefix}, in lexicographic order, with size and etag. */
  List<ObjectInfo> list(String prefix);

  /**
   * One level of the key hierarchy below {@code prefix}: a listing with delimiter {@code /}.
   * Of the keys starting with {@code prefix}, those without a {@code /} after the prefix are
   * returned as objects (with size and etag, as {@link #list} gives them); the others are
   * returned as their directory {@code prefix + segment + "/"}, once however many keys lie below
   * it. A directory is returned only while at least one key lies below it. Both lists are in
   * lexicographic order. The answer holds the entries of that one level, not the keys below the
   * directories, so it stays small where {@link #list} of the same prefix would return a whole
   * subtree ({@code listChildren("tenants/")} names each tenant once).
   */
  Children listChildren(String prefix);

  /** Deletes the key; deleting a missing key succeeds. */
  void delete(String key);

  /** A short description for logs ({@code fs:/path}, {@code s3://bucket/prefix}). */
  String describe();

  @Override
  default void close() {}

  /** A blob's content and etag. */
  record Blob(byte[] data, String etag) {}

  /**
   * A key's size in bytes, etag and when the store last wrote it ({@code lastModified}: the
   * store's own clock, to the precision it keeps; null where a store does not say).
   */
  record ObjectInfo(String key, long size, String etag, Instant lastModified) {
    /** An object whose write time is not known. */
    public ObjectInfo(String key, long size, String etag) {
      this(key, size, etag, null);
    }

    /** This object without its write time (to compare what two listings say of its content). */
    public ObjectInfo withoutTime() {
      return lastModified == null ? this : new ObjectInfo(key, size, etag);
    }
  }

  /**
   * The answer of {@link #listChildren}: the keys directly at the level, and the directories
   * below it, each ending in {@code /}.
   */
  record Children(List<ObjectInfo> objects, List<String> directories) {
    public static final Children EMPTY = new Children(List.of(), List.of());

    public Children {
      objects = List.copyOf(objects);
      directories = List.copyOf(directories);
    }
  }
}
