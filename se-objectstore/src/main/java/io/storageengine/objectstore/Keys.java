package io.storageengine.objectstore;

import io.storageengine.common.SeException;

/** Key rules shared by every backend: non-empty, relative, no empty or dot segments. */
public final class Keys {
  private Keys() {}

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
}
