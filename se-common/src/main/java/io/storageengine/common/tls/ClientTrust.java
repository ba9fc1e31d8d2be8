package io.storageengine.common.tls;

import io.storageengine.common.SeException;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Which servers a TLS client trusts: the JDK's trust store ({@link #jdkDefault()}), or only the
 * CA certificates of one PEM bundle ({@code --tls.ca}, {@link #of}). Host names are always
 * verified; there is no way to trust every certificate.
 */
public final class ClientTrust {
  private static final ClientTrust JDK_DEFAULT = new ClientTrust(Optional.empty(), List.of());

  private final Optional<Path> bundle;
  private final List<X509Certificate> certificates;

  private ClientTrust(Optional<Path> bundle, List<X509Certificate> certificates) {
    this.bundle = bundle;
    this.certificates = certificates;
  }

  /** The JDK's default trust store (public CAs, or what {@code javax.net.ssl.trustStore} names). */
  public static ClientTrust jdkDefault() {
    return JDK_DEFAULT;
  }

  /**
   * The CA certificates of the PEM file {@code bundle}, read now; {@code flag} names the setting
   * in errors ({@code --tls.ca}).
   */
  public static ClientTrust of(String flag, Path bundle) {
    return new ClientTrust(Optional.of(bundle), PemFiles.certificates(flag, bundle));
  }

  /** {@link #of} for {@code --tls.ca} when given, else {@link #jdkDefault()}. */
  public static ClientTrust of(Optional<Path> bundle) {
    return bundle.map(b -> of(TlsConfig.CA.flag(), b)).orElse(JDK_DEFAULT);
  }

  /** The PEM bundle, empty for the JDK's trust store. */
  public Optional<Path> bundle() {
    return bundle;
  }

  /** The trusted CA certificates; empty means the JDK's trust store. */
  public List<X509Certificate> certificates() {
    return certificates;
  }

  /** An {@link SSLContext} for clients that take one ({@code java.net.http.HttpClient}). */
  public SSLContext sslContext() {
    try {
      if (certificates.isEmpty()) {
        return SSLContext.getDefault();
      }
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, trustManagerFactory().getTrustManagers(), null);
      return context;
    } catch (GeneralSecurityException e) {
      throw SeException.internal("cannot build a TLS context", e);
    }
  }

  /** The trust managers over {@link #certificates()} (the JDK's when empty). */
  public TrustManagerFactory trustManagerFactory() {
    try {
      TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      if (certificates.isEmpty()) {
        factory.init((KeyStore) null);
        return factory;
      }
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      for (int i = 0; i < certificates.size(); i++) {
        store.setCertificateEntry("ca-" + i, certificates.get(i));
      }
      factory.init(store);
      return factory;
    } catch (GeneralSecurityException | IOException e) {
      throw SeException.internal("cannot build a TLS trust store", e);
    }
  }

  @Override
  public String toString() {
    return bundle.map(b -> "ClientTrust[" + b + "]").orElse("ClientTrust[jdk default]");
  }
}
