package io.storageengine.common.tls;

import io.storageengine.common.SeException;
import io.storageengine.common.config.ConfigSource;
import io.storageengine.common.config.Setting;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Optional;

/**
 * TLS of a process: the certificate and key its listener serves ({@code --tls.cert},
 * {@code --tls.key}; both or neither) and the CAs its clients trust when they call other roles
 * ({@code --tls.ca}; default the JDK's trust store). {@link #from} reads and checks the files, so
 * a process with a missing, unreadable or mismatched file refuses to start, naming it.
 *
 * @param identity what the listener serves; empty: plain HTTP and gRPC
 * @param trust what clients of this process trust
 */
public record TlsConfig(Optional<Identity> identity, ClientTrust trust) {
  public static final Setting<String> CERT = Setting.string("tls.cert", "", "FILE",
      "PEM certificate chain the listener serves (leaf first); with --tls.key the listener speaks HTTPS and gRPC over TLS");
  public static final Setting<String> KEY = Setting.string("tls.key", "", "FILE",
      "PEM private key of --tls.cert (unencrypted PKCS#8: BEGIN PRIVATE KEY)");
  public static final Setting<String> CA = Setting.string("tls.ca", "", "FILE",
      "PEM bundle of the CAs trusted when this process calls other roles over TLS (default: the JDK's trust store)");
  /** Every setting of TLS. */
  public static final List<Setting<?>> SETTINGS = List.of(CERT, KEY, CA);
  /** No listener certificate, the JDK's trust store. */
  public static final TlsConfig PLAIN = new TlsConfig(Optional.empty(), ClientTrust.jdkDefault());

  /** A listener's certificate chain (leaf first) and the leaf's private key. */
  public record Identity(PrivateKey key, List<X509Certificate> chain) {
    public Identity {
      chain = List.copyOf(chain);
    }

    @Override
    public String toString() {
      return "Identity[" + chain.get(0).getSubjectX500Principal() + "]";
    }
  }

  /** Reads {@link #SETTINGS}; fails with {@code INVALID_ARGUMENT} naming the flag and the file. */
  public static TlsConfig from(ConfigSource source) {
    Optional<Path> cert = path(source, CERT);
    Optional<Path> key = path(source, KEY);
    if (cert.isPresent() != key.isPresent()) {
      throw SeException.invalid("%s is given without %s: TLS needs both the certificate and its key",
          cert.isPresent() ? CERT.flag() : KEY.flag(), cert.isPresent() ? KEY.flag() : CERT.flag());
    }
    Optional<Identity> identity = cert.map(c -> identity(c, key.get()));
    return new TlsConfig(identity, ClientTrust.of(path(source, CA)));
  }

  /** Whether the listener serves TLS. */
  public boolean serves() {
    return identity.isPresent();
  }

  /** The certificate chain of {@code cert} and the key of {@code key}, checked to belong together. */
  public static Identity identity(Path cert, Path key) {
    List<X509Certificate> chain = PemFiles.certificates(CERT.flag(), cert);
    PrivateKey privateKey = PemFiles.privateKey(KEY.flag(), key);
    if (!matches(privateKey, chain.get(0))) {
      throw SeException.invalid("%s %s: the key does not belong to the first certificate of %s %s",
          KEY.flag(), key, CERT.flag(), cert);
    }
    return new Identity(privateKey, chain);
  }

  /** Signs a probe with the key and verifies it with the certificate's public key. */
  private static boolean matches(PrivateKey key, X509Certificate certificate) {
    String algorithm = switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      case "Ed25519", "EdDSA" -> "Ed25519";
      default -> null;
    };
    if (algorithm == null) {
      return false;
    }
    try {
      byte[] probe = "storage-engine tls key check".getBytes(StandardCharsets.US_ASCII);
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(certificate.getPublicKey());
      verifier.update(probe);
      return verifier.verify(signer.sign());
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static Optional<Path> path(ConfigSource source, Setting<String> setting) {
    String text = source.text(setting);
    return text.isBlank() ? Optional.empty() : Optional.of(Path.of(text).toAbsolutePath().normalize());
  }
}
