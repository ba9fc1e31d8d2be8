package io.storageengine.secretstore;

import io.storageengine.common.SeException;

/**
 * A reversible mapping of {@link SecretKeys keys} ({@code [a-z0-9_.-]} segments joined by
 * {@code /}) to secret names of services whose names allow fewer characters, with one escape
 * character {@code e}: letters and digits stay, and each other character becomes {@code e}
 * followed by one letter: {@code /} is {@code es}, {@code .} is {@code ed}, {@code _} is
 * {@code eu}, and {@code e} itself is {@code ee}; punctuation the service allows besides the
 * escape ({@code -} for Secret Manager) stays as it is.
 *
 * <p>Encoded names are lowercase, so two keys never map to names that differ only in case (Key
 * Vault compares names case-insensitively). Decoding reads left to right: after an escape comes
 * exactly one letter.
 */
final class SecretNames {
  private final char escape;
  private final String kept;

  /**
   * {@code escape} is {@code -} (Azure Key Vault: {@code [0-9a-zA-Z-]}) or {@code _} (Google
   * Cloud Secret Manager: {@code [a-zA-Z0-9_-]}, where {@code -} is kept).
   */
  SecretNames(char escape, String kept) {
    this.escape = escape;
    this.kept = kept;
  }

  /** The Azure Key Vault mapping: {@code catalog/my-lake_1} is {@code catalog-smy--lake-u1}. */
  static final SecretNames AZURE = new SecretNames('-', "");

  /** The Secret Manager mapping: {@code catalog/my-lake_1} is {@code catalog_smy-lake__1}. */
  static final SecretNames GCP = new SecretNames('_', "-");

  /** The name of {@code key} (checked with {@link SecretKeys#check}). */
  String encode(String key) {
    SecretKeys.check(key);
    StringBuilder out = new StringBuilder(key.length() + 8);
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || kept.indexOf(c) >= 0) {
        out.append(c);
      } else if (c == escape) {
        out.append(escape).append(escape);
      } else {
        out.append(escape).append(switch (c) {
          case '/' -> 's';
          case '.' -> 'd';
          case '_' -> 'u';
          default -> throw new IllegalStateException("checked key has '" + c + "'");
        });
      }
    }
    return out.toString();
  }

  /** The key {@code name} stands for; INVALID_ARGUMENT when it is not an encoded key. */
  String decode(String name) {
    StringBuilder out = new StringBuilder(name.length());
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c != escape) {
        out.append(c);
        continue;
      }
      if (++i == name.length()) {
        throw SeException.invalid("secret name '%s' is not an encoded key: it ends in '%s'", name, escape);
      }
      char e = name.charAt(i);
      out.append(switch (e) {
        case 's' -> '/';
        case 'd' -> '.';
        case 'u' -> '_';
        default -> {
          if (e == escape) {
            yield escape;
          }
          throw SeException.invalid("secret name '%s' is not an encoded key: unknown escape '%s%s'", name, escape, e);
        }
      });
    }
    return SecretKeys.check(out.toString());
  }
}
