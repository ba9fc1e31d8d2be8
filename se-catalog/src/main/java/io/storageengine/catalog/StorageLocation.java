package io.storageengine.catalog;

import java.io.Serializable;

/**
 * A table-storage location split the way {@code storage.operation} spans report it: the bucket
 * (the authority of an object-store URI such as {@code s3://bucket/key}; null for local paths)
 * and the path (the object key, or the local file path without its {@code file:} scheme).
 *
 * <p>Credentials never reach the result: a {@code user:password@} user-info is dropped from the
 * authority, and secret-looking query parameters are redacted from the path.
 */
record StorageLocation(String bucket, String path) implements Serializable {

  /** Splits {@code location}; null stays null. */
  static StorageLocation parse(String location) {
    if (location == null) {
      return null;
    }
    int colon = schemeEnd(location);
    if (colon < 0) {
      return new StorageLocation(null, redact(location)); // a plain local path
    }
    String scheme = location.substring(0, colon);
    String rest = location.substring(colon + 1);
    if (!rest.startsWith("//")) {
      return new StorageLocation(null, redact(rest)); // file:/a/b
    }
    int slash = rest.indexOf('/', 2);
    String authority = slash < 0 ? rest.substring(2) : rest.substring(2, slash);
    String path = slash < 0 ? "" : rest.substring(slash);
    if (scheme.equalsIgnoreCase("file")) {
      return new StorageLocation(null, redact(path)); // file:///a/b, file://host/a/b
    }
    // Object stores: the authority is the bucket (container@account for Azure) and the key has
    // no leading slash.
    return new StorageLocation(bucket(authority), redact(path.startsWith("/") ? path.substring(1) : path));
  }

  /** The index of the ':' ending a URI scheme, or -1 (also for Windows drive letters). */
  private static int schemeEnd(String location) {
    int colon = location.indexOf(':');
    if (colon < 2) {
      return -1;
    }
    for (int i = 0; i < colon; i++) {
      char c = location.charAt(i);
      boolean ok = Character.isLetter(c) || (i > 0 && (Character.isDigit(c) || c == '+' || c == '-' || c == '.'));
      if (!ok) {
        return -1;
      }
    }
    return colon;
  }

  private static String bucket(String authority) {
    int at = authority.lastIndexOf('@');
    if (at >= 0 && authority.substring(0, at).indexOf(':') >= 0) {
      return authority.substring(at + 1); // user:password@host: never record the user-info
    }
    return authority.isEmpty() ? null : authority;
  }

  private static String redact(String path) {
    // Object keys rarely carry query-like text; only then is the regex-based redaction worth it.
    if (path.indexOf('?') < 0 && path.indexOf(';') < 0) {
      return path;
    }
    return CatalogRedaction.text(path);
  }
}
