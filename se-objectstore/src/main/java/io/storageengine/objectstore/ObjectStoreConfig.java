package io.storageengine.objectstore;

import io.storageengine.common.SeException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Where cluster storage lives: the {@code --object-store.*} options.
 *
 * @param type the backend
 * @param root directory of the {@code fs} backend ({@code --object-store.root})
 * @param bucket bucket of the {@code s3} backend ({@code --object-store.bucket})
 * @param prefix optional key prefix inside the bucket ({@code --object-store.prefix})
 * @param endpoint optional endpoint of an S3-compatible store, e.g. {@code http://127.0.0.1:9000}
 *     ({@code --object-store.endpoint}); path-style access is used when it is set
 * @param region optional region ({@code --object-store.region}); else the standard AWS
 *     variables, else {@code us-east-1}
 */
public record ObjectStoreConfig(
    Type type, Path root, String bucket, String prefix, String endpoint, String region) {

  public static final String TYPE_OPTION = "--object-store.type";
  public static final String ROOT_OPTION = "--object-store.root";
  public static final String BUCKET_OPTION = "--object-store.bucket";
  public static final String PREFIX_OPTION = "--object-store.prefix";
  public static final String ENDPOINT_OPTION = "--object-store.endpoint";
  public static final String REGION_OPTION = "--object-store.region";

  /** The object store backends. */
  public enum Type {
    FS, MEMORY, S3;

    /** The name used in options and config files: {@code fs}, {@code memory}, {@code s3}. */
    public String id() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** Parses an option value, case-insensitively. */
    public static Type parse(String value) {
      for (Type type : values()) {
        if (value != null && type.id().equals(value.trim().toLowerCase(Locale.ROOT))) {
          return type;
        }
      }
      throw SeException.invalid(
          "invalid %s '%s': expected fs, memory or s3", TYPE_OPTION, value);
    }
  }

  /** Blank strings mean "not set", so that empty environment variables behave like absent ones. */
  public ObjectStoreConfig {
    bucket = blankToNull(bucket);
    prefix = blankToNull(prefix);
    endpoint = blankToNull(endpoint);
    region = blankToNull(region);
  }

  public static ObjectStoreConfig fs(Path root) {
    return new ObjectStoreConfig(Type.FS, root, null, null, null, null);
  }

  public static ObjectStoreConfig memory() {
    return new ObjectStoreConfig(Type.MEMORY, null, null, null, null, null);
  }

  public static ObjectStoreConfig s3(String bucket, String prefix, String endpoint, String region) {
    return new ObjectStoreConfig(Type.S3, null, bucket, prefix, endpoint, region);
  }

  private static String blankToNull(String value) {
    return value == null || value.isBlank() ? null : value.trim();
  }
}
