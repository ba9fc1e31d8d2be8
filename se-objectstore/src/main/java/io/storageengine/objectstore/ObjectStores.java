package io.storageengine.objectstore;

import io.storageengine.common.SeException;

/** Builds the object store a configuration describes. */
public final class ObjectStores {
  private ObjectStores() {}

  /**
   * Opens the configured store; the caller closes it. Throws INVALID_ARGUMENT naming the
   * option when one is missing or invalid, UNAVAILABLE when the storage cannot be opened.
   * The {@code s3} backend takes credentials from the AWS default provider chain.
   */
  public static ObjectStore create(ObjectStoreConfig config) {
    if (config == null || config.type() == null) {
      throw SeException.invalid(
          "object store needs %s (fs, memory or s3)", ObjectStoreConfig.TYPE_OPTION);
    }
    return switch (config.type()) {
      case MEMORY -> new MemoryObjectStore();
      case FS -> {
        if (config.root() == null) {
          throw SeException.invalid(
              "object store type fs needs %s", ObjectStoreConfig.ROOT_OPTION);
        }
        yield new FsObjectStore(config.root());
      }
      case S3 -> S3ObjectStore.create(config);
    };
  }
}
