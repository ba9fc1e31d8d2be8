package io.storageengine.secretstore;

import io.storageengine.common.SeException;
import java.util.regex.Pattern;

/** Key rules shared by every secret store: lowercase slash-separated segments. */
public final class SecretKeys {
  private static final Pattern SEGMENT = Pattern.compile("[a-z0-9][a-z0-9_.-]{0,127}");
  private static final int MAX_LENGTH = 512;

  private SecretKeys() {}

  /**
   * Returns {@code key} when it is valid: 1 to 512 characters, segments separated by {@code /},
   * each segment starting with a lowercase letter or digit followed by lowercase letters,
   * digits, {@code _}, {@code .} or {@code -}. Throws INVALID_ARGUMENT naming the key otherwise.
   */
  public static String check(String key) {
    if (key == null || key.isEmpty() || key.length() > MAX_LENGTH) {
      throw SeException.invalid("invalid secret key '%s'", key == null ? "" : key);
    }
    for (String segment : key.split("/", -1)) {
      if (!SEGMENT.matcher(segment).matches()) {
        throw SeException.invalid(
            "invalid secret key '%s': segment '%s' must match [a-z0-9][a-z0-9_.-]*", key, segment);
      }
    }
    return key;
  }
}
