package io.storageengine.auth;

import io.storageengine.common.SeException;
import java.util.Locale;

/** How callers prove who they are ({@code --auth.mode}). */
public enum AuthMode {
  /** No credentials: every caller is {@link Principal#anonymous()}, allowed everything. Loopback only. */
  NONE,
  /** Opaque API tokens issued by the engine and kept as salted hashes in the secret store ({@link TokenStore}). */
  TOKENS,
  /** JWT access tokens of an OpenID Connect issuer, verified against its JWKS ({@link OidcAuthenticator}). */
  OIDC;

  /** The name used in flags and variables: {@code none}, {@code tokens}, {@code oidc}. */
  public String flagValue() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The mode named {@code text} as {@link #flagValue()} spells it. */
  public static AuthMode parse(String text) {
    for (AuthMode mode : values()) {
      if (mode.flagValue().equals(text)) {
        return mode;
      }
    }
    throw SeException.invalid("--auth.mode: expected none, tokens or oidc, got '%s'", text);
  }
}
