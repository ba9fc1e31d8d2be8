package io.storageengine.auth;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;

/** Reads the token out of an {@code Authorization} value. Error messages never repeat the value. */
public final class Credentials {
  private static final String BEARER = "bearer ";
  private static final String BASIC = "basic ";

  private Credentials() {}

  /**
   * The token in {@code authorizationHeaderValue}: {@code Bearer <token>}, or {@code Basic} with
   * base64 of {@code user:token} as Flight clients send it in the handshake. The user part of Basic
   * is not checked (clients put their name, {@code token} or nothing there): the token alone proves
   * who the caller is. Scheme names are case-insensitive.
   *
   * @throws SeException UNAUTHENTICATED when the value is absent, uses another scheme or is malformed
   */
  public static String token(String authorizationHeaderValue) {
    if (authorizationHeaderValue == null || authorizationHeaderValue.isBlank()) {
      throw unauthenticated("no credentials: send Authorization: Bearer <token>");
    }
    String value = authorizationHeaderValue.strip();
    String lower = value.toLowerCase(Locale.ROOT);
    String token;
    if (lower.startsWith(BEARER)) {
      token = value.substring(BEARER.length()).strip();
    } else if (lower.startsWith(BASIC)) {
      token = basicPassword(value.substring(BASIC.length()).strip());
    } else {
      int space = value.indexOf(' ');
      String scheme = space < 0 ? "" : value.substring(0, space);
      throw unauthenticated(scheme.matches("[A-Za-z-]{1,20}")
          ? "unsupported authorization scheme `" + scheme + "`: use Bearer"
          : "malformed Authorization value: expected Bearer <token>");
    }
    if (token.isEmpty()) {
      throw unauthenticated("empty token");
    }
    return token;
  }

  private static String basicPassword(String encoded) {
    String decoded;
    try {
      decoded = new String(Base64.getDecoder().decode(encoded), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw unauthenticated("malformed Basic credentials: expected base64 of user:token");
    }
    int colon = decoded.indexOf(':');
    if (colon < 0) {
      throw unauthenticated("malformed Basic credentials: expected base64 of user:token");
    }
    return decoded.substring(colon + 1);
  }

  static SeException unauthenticated(String reason) {
    return new SeException(ErrorCode.UNAUTHENTICATED, reason);
  }
}
