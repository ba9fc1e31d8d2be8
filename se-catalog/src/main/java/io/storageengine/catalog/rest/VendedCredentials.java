package io.storageengine.catalog.rest;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.iceberg.aws.AwsClientProperties;
import org.apache.iceberg.aws.s3.S3FileIOProperties;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.rest.credentials.Credential;
import org.apache.iceberg.rest.credentials.ImmutableCredential;

/**
 * Credential vending: the storage configuration a REST client needs to read and write a table's
 * files itself, handed out by the facade when the client asks for it with {@value #HEADER}:
 * {@value #VENDED_CREDENTIALS}. Only for tables on S3 ({@code s3://}, {@code s3a://},
 * {@code s3n://}); the values are the tenant's own storage properties as its catalog resolved them
 * ({@code secret-ref:} values already read), taken from the table's FileIO, and only the keys in
 * {@link #VENDED_KEYS}. They are static credentials: no short-lived (STS) ones are minted.
 *
 * <p>The values are secrets: nothing here logs them, and the facade puts them only into the
 * response body of the caller who asked (every facade caller holds at least {@code reader} on the
 * catalog).
 */
final class VendedCredentials {
  /** The request header by which a client asks for access delegation (REST spec). */
  static final String HEADER = "X-Iceberg-Access-Delegation";
  /** The {@value #HEADER} mechanism served. */
  static final String VENDED_CREDENTIALS = "vended-credentials";

  /** The FileIO properties vended: where S3 is, how to address it, and the keys to sign with. */
  static final List<String> VENDED_KEYS = List.of(
      S3FileIOProperties.ENDPOINT,
      S3FileIOProperties.PATH_STYLE_ACCESS,
      AwsClientProperties.CLIENT_REGION,
      S3FileIOProperties.ACCESS_KEY_ID,
      S3FileIOProperties.SECRET_ACCESS_KEY,
      S3FileIOProperties.SESSION_TOKEN);

  private VendedCredentials() {}

  /** Whether a {@value #HEADER} value (a comma-separated list of mechanisms, or null) asks for vended credentials. */
  static boolean requested(String header) {
    if (header == null) {
      return false;
    }
    for (String mechanism : header.split(",")) {
      if (mechanism.trim().toLowerCase(Locale.ROOT).equals(VENDED_CREDENTIALS)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The credentials for the files under {@code location} read through {@code io}: one credential
   * whose prefix is the location, or none when the location is not on S3 or {@code io} has none
   * of the {@link #VENDED_KEYS}.
   */
  static List<Credential> of(String location, FileIO io) {
    if (location == null || !onS3(location)) {
      return List.of();
    }
    Map<String, String> properties = io.properties();
    Map<String, String> config = new LinkedHashMap<>();
    for (String key : VENDED_KEYS) {
      String value = properties.get(key);
      if (value != null && !value.isEmpty()) {
        config.put(key, value);
      }
    }
    if (config.isEmpty()) {
      return List.of();
    }
    return List.of(ImmutableCredential.builder().prefix(location).config(config).build());
  }

  /** The config of {@code credentials} as one map (the older form: a load response's {@code config}). */
  static Map<String, String> config(List<Credential> credentials) {
    Map<String, String> config = new LinkedHashMap<>();
    credentials.forEach(c -> config.putAll(c.config()));
    return config;
  }

  private static boolean onS3(String location) {
    String l = location.toLowerCase(Locale.ROOT);
    return l.startsWith("s3://") || l.startsWith("s3a://") || l.startsWith("s3n://");
  }
}
