package io.storageengine.secretstore;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.Locale;
import java.util.Set;

/**
 * A pointer to a secret kept in an external store, written as a catalog property value instead
 * of the secret itself: {@code secret-ref:<store>://<name>}, e.g.
 * {@code secret-ref:aws-sm://prod/lake-credential}. Only the pointer is stored; the value is read
 * when the catalog is built.
 *
 * <ul>
 *   <li>{@code aws-sm://<name or ARN>}: an AWS Secrets Manager secret (its SecretString, or
 *       SecretBinary as UTF-8).</li>
 *   <li>{@code vault://<path>[#<field>]}: field {@code field} (default {@code value}) of the
 *       KV v2 secret at {@code path} under the configured mount.</li>
 *   <li>{@code azure-kv://<name>[/<version>]}: an Azure Key Vault secret of the configured vault
 *       (its text value as UTF-8).</li>
 *   <li>{@code gcp-sm://<id>[/<version>]} or {@code gcp-sm://projects/<p>/secrets/<id>[/versions/<v>]}:
 *       a Google Cloud Secret Manager secret (of the configured project unless named in full),
 *       version default {@code latest}.</li>
 * </ul>
 *
 * <p>A malformed reference is UNPROCESSABLE naming the problem (never the rest of the value).
 */
public record SecretReference(String store, String name) {
  public static final String PREFIX = "secret-ref:";
  public static final Set<String> STORES = Set.of("aws-sm", "azure-kv", "gcp-sm", "vault");

  public SecretReference {
    if (!STORES.contains(store)) {
      throw new SeException(ErrorCode.UNPROCESSABLE, "secret reference: unknown store '" + store
          + "' (expected aws-sm, azure-kv, gcp-sm or vault)");
    }
    if (name == null || name.isBlank() || name.chars().anyMatch(c -> c < 0x21 || c == 0x7f)) {
      throw new SeException(ErrorCode.UNPROCESSABLE,
          "secret reference to " + store + ": the secret name must be non-empty, without spaces or control characters");
    }
  }

  /** True when {@code value} is meant as a reference (starts with {@value #PREFIX}). */
  public static boolean isReference(String value) {
    return value != null && value.regionMatches(true, 0, PREFIX, 0, PREFIX.length());
  }

  /** Parses {@code secret-ref:<store>://<name>}. */
  public static SecretReference parse(String value) {
    if (!isReference(value)) {
      throw new SeException(ErrorCode.UNPROCESSABLE, "not a secret reference (expected secret-ref:<store>://<name>)");
    }
    String rest = value.substring(PREFIX.length());
    int sep = rest.indexOf("://");
    if (sep <= 0) {
      throw new SeException(ErrorCode.UNPROCESSABLE,
          "secret reference must look like secret-ref:<store>://<name>, e.g. secret-ref:aws-sm://prod/lake-credential");
    }
    return new SecretReference(rest.substring(0, sep).toLowerCase(Locale.ROOT), rest.substring(sep + 3));
  }

  @Override
  public String toString() {
    return PREFIX + store + "://" + name;
  }
}
