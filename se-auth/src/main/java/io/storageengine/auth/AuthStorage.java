package io.storageengine.auth;

import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.secretstore.SecretStore;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;

/** JSON documents under {@code auth/} in a {@link SecretStore}, shared by the token and grant stores. */
final class AuthStorage {
  static final String ROOT = "auth/";

  private AuthStorage() {}

  /**
   * A key segment for any text (catalog ids, OIDC subjects and groups are not restricted to the secret
   * store's key alphabet): the hex SHA-256 of the text. The text itself is kept inside the document.
   */
  static String segment(String text) {
    return HexFormat.of().formatHex(sha256(text.getBytes(StandardCharsets.UTF_8)));
  }

  static byte[] sha256(byte[]... parts) {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      for (byte[] part : parts) {
        digest.update(part);
      }
      return digest.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  static <T> Optional<T> read(SecretStore store, String key, Class<T> type) {
    return store.get(key).map(secret -> {
      try {
        return Json.read(secret.value(), type);
      } catch (SeException e) {
        // The store holds only what this module wrote: a bad document is damage, not a user error.
        throw SeException.internal("unreadable auth document " + key + ": " + e.getMessage(), e);
      }
    });
  }

  static byte[] write(Object document) {
    return Json.toBytes(document);
  }
}
