package io.storageengine.common.tls;

import io.storageengine.common.SeException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the PEM files of {@code --tls.cert}, {@code --tls.key} and {@code --tls.ca}. Every failure
 * is {@code INVALID_ARGUMENT} naming the flag and the file; key material never reaches a message.
 */
final class PemFiles {
  private static final Pattern BLOCK = Pattern.compile(
      "-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*)-----END \\1-----");
  /** Key types the JDK reads from PKCS#8 and serves TLS with. */
  private static final List<String> KEY_ALGORITHMS = List.of("RSA", "EC", "Ed25519");

  private PemFiles() {}

  /** Every certificate of the PEM file, in file order (a chain: the leaf first). */
  static List<X509Certificate> certificates(String flag, Path file) {
    String text = read(flag, file);
    List<X509Certificate> certificates = new ArrayList<>();
    try {
      CertificateFactory factory = CertificateFactory.getInstance("X.509");
      Matcher m = BLOCK.matcher(text);
      while (m.find()) {
        if (!m.group(1).equals("CERTIFICATE")) {
          continue;
        }
        byte[] der = decode(flag, file, m.group(2));
        certificates.add((X509Certificate) factory.generateCertificate(new ByteArrayInputStream(der)));
      }
    } catch (CertificateException e) {
      throw SeException.invalid("%s %s: not a valid PEM certificate (%s)", flag, file, e.getMessage());
    }
    if (certificates.isEmpty()) {
      throw SeException.invalid("%s %s: no PEM certificate (-----BEGIN CERTIFICATE-----) in the file", flag, file);
    }
    return List.copyOf(certificates);
  }

  /** The one private key of the PEM file: unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY}). */
  static PrivateKey privateKey(String flag, Path file) {
    String text = read(flag, file);
    Matcher m = BLOCK.matcher(text);
    while (m.find()) {
      String type = m.group(1);
      switch (type) {
        case "PRIVATE KEY" -> {
          return pkcs8(flag, file, decode(flag, file, m.group(2)));
        }
        case "RSA PRIVATE KEY", "EC PRIVATE KEY" -> throw SeException.invalid(
            "%s %s: a PKCS#1 / SEC 1 key (BEGIN %s), not PKCS#8; convert it: "
                + "openssl pkcs8 -topk8 -nocrypt -in %s -out key.pkcs8.pem", flag, file, type, file.getFileName());
        case "ENCRYPTED PRIVATE KEY" -> throw SeException.invalid(
            "%s %s: the key is encrypted; give an unencrypted PKCS#8 key (mode 0600): "
                + "openssl pkcs8 -topk8 -nocrypt -in %s -out key.pkcs8.pem", flag, file, file.getFileName());
        default -> {
          // certificates or parameters next to the key: skip them
        }
      }
    }
    throw SeException.invalid("%s %s: no PEM private key (-----BEGIN PRIVATE KEY-----) in the file", flag, file);
  }

  private static PrivateKey pkcs8(String flag, Path file, byte[] der) {
    for (String algorithm : KEY_ALGORITHMS) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        // not this algorithm: try the next
      }
    }
    throw SeException.invalid("%s %s: not a PKCS#8 RSA, EC or Ed25519 private key", flag, file);
  }

  private static byte[] decode(String flag, Path file, String base64) {
    try {
      return Base64.getMimeDecoder().decode(base64.replaceAll("\\s", ""));
    } catch (IllegalArgumentException e) {
      throw SeException.invalid("%s %s: a PEM block is not valid base64", flag, file);
    }
  }

  private static String read(String flag, Path file) {
    try {
      return Files.readString(file, StandardCharsets.US_ASCII);
    } catch (java.nio.file.NoSuchFileException e) {
      throw SeException.invalid("%s %s: no such file", flag, file);
    } catch (java.nio.charset.MalformedInputException e) {
      throw SeException.invalid("%s %s: not a PEM file (binary content; DER files need converting to PEM)", flag, file);
    } catch (IOException e) {
      throw SeException.invalid("%s %s: cannot read the file (%s)", flag, file, e.getClass().getSimpleName());
    }
  }
}
