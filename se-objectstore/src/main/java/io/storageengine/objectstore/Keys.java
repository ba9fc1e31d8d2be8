package io.storageengine.objectstore;

import io.storageengine.common.SeException;

/** Key rules shared by every backend: non-empty, relative, no empty or dot segments. */
public final class Keys {
  private Keys() {}

  /** Returns {@code key} when it is a valid object key, else throws INVALID_ARGUMENT. */
  public static String check(String key) {
    if (key == null || key.isEmpty() || key.startsWith("/") || key.endsWith("/")) {
      throw SeException.invalid("invalid object key '%s'", key);
    }
    for (String segment : key.split("/", -1)) {
      if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
        throw SeException.invalid("invalid object key '%s'", key);
      }
    }
    return key;
  }

  /** Returns {@code prefix} for {@code list}: any string, but not null. */
  static String checkPrefix(String prefix) {
    if (prefix == null) {
      throw SeException.invalid("object key prefix must not be null");
    }
    return prefix;
  }

  /** Returns {@code data} when it is not null. */
  static byte[] checkData(String key, byte[] data) {
    if (data == null) {
      throw SeException.invalid("data of object key '%s' must not be null", key);
    }
    return data;
  }

  /** Validates the arguments of {@code getRange}. */
  static void checkRange(String key, long offset, int length) {
    if (offset < 0 || length < 0) {
      throw SeException.invalid(
          "invalid range of object key '%s': offset %d, length %d (both must be >= 0)",
          key, offset, length);
    }
  }
}
