package io.storageengine.objectstore;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** Hex MD5 digests: the etag of a simple (non-multipart) S3 upload, reused by the fs store. */
final class Md5 {
  private Md5() {}

  static String hex(byte[] data) {
    return HexFormat.of().formatHex(digest().digest(data));
  }

  static String hex(Path file) throws IOException {
    MessageDigest md = digest();
    byte[] buffer = new byte[64 * 1024];
    try (InputStream in = Files.newInputStream(file)) {
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        md.update(buffer, 0, n);
      }
    }
    return HexFormat.of().formatHex(md.digest());
  }

  private static MessageDigest digest() {
    try {
      return MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      // Every Java platform is required to provide MD5.
      throw new IllegalStateException("MD5 is not available", e);
    }
  }
}
