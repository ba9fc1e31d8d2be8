package io.storageengine.auth;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;

/** Reads the token out of an {@code Authorization} value. Error messages never repeat the value. */
public final class Credentials {
  private static final String BEARER = "bearer";
  private static final String BASIC = "basic";

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
    int space = 0;
    while (space < value.length() && !Character.isWhitespace(value.charAt(space))) {
      space++;
    }
    String scheme = value.substring(0, space).toLowerCase(Locale.ROOT);
    String rest = value.substring(space).strip();
    String token;
    if (scheme.equals(BEARER)) {
      token = rest;
    } else if (scheme.equals(BASIC)) {
      token = basicPassword(rest);
    } else {
      throw unauthenticated(rest.isEmpty() || !scheme.matches("[a-z-]{1,20}")
          ? "malformed Authorization value: expected Bearer <token>"
          : "unsupported authorization scheme `" + value.substring(0, space) + "`: use Bearer");
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
