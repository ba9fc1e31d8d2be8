package io.storageengine.common;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** Hides values whose names look secret before they reach a response, a log line or a span. */
public final class Redaction {
  public static final String REDACTED = "**redacted**";

  private static final String[] SECRET_WORDS = {
    "credential", "token", "secret", "password", "passwd", "key", "auth", "signature", "session"
  };

  private Redaction() {}

  /** True when a property named {@code name} may hold a secret. */
  public static boolean isSecretName(String name) {
    String lower = name.toLowerCase(Locale.ROOT);
    for (String word : SECRET_WORDS) {
      if (lower.contains(word)) {
        return true;
      }
    }
    return false;
  }

  /** A copy of {@code properties} with secret-looking values replaced. */
  public static Map<String, String> redact(Map<String, String> properties) {
    Map<String, String> out = new LinkedHashMap<>();
    properties.forEach((k, v) -> out.put(k, isSecretName(k) ? REDACTED : v));
    return out;
  }
}
