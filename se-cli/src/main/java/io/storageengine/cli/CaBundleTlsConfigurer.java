package io.storageengine.cli;

import io.storageengine.common.tls.ClientTrust;
import java.nio.file.Path;
import java.util.Map;
import javax.net.ssl.SSLContext;
import org.apache.iceberg.rest.auth.TLSConfigurer;

/**
 * Makes Iceberg's REST client trust the CA bundle of {@code --tls.ca} (catalog property
 * {@link #BUNDLE}) instead of the JDK's trust store; host names are still verified.
 */
public final class CaBundleTlsConfigurer implements TLSConfigurer {
  /** The catalog property naming the PEM bundle. */
  static final String BUNDLE = "se.tls.ca";

  private SSLContext context;

  @Override
  public void initialize(Map<String, String> properties) {
    context = ClientTrust.of("--tls.ca", Path.of(properties.get(BUNDLE))).sslContext();
  }

  @Override
  public SSLContext sslContext() {
    return context;
  }
}
