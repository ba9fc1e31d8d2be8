package io.storageengine.cli;

import io.storageengine.common.SeException;
import io.storageengine.common.tls.ClientTrust;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import javax.net.ssl.SSLException;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.LocationSchemes;
import picocli.CommandLine.Option;

/**
 * {@code --tls.ca} / {@code SE_TLS_CA}: the PEM bundle of CAs a client command trusts for a
 * server at {@code https://} or {@code grpc+tls://} (a private CA); without it the JDK's trust
 * store. Host names are always verified.
 */
final class TlsOption {
  @Option(names = "--tls.ca", paramLabel = "FILE", defaultValue = "${env:SE_TLS_CA}",
      description = "PEM bundle of the CAs to trust for an https:// or grpc+tls:// server (default: the SE_TLS_CA"
          + " variable, else the JDK's trust store).")
  String ca;

  /** What the command trusts; the bundle is read now, so a bad file fails before any call. */
  ClientTrust trust() {
    return ClientTrust.of(bundle());
  }

  /** The bundle, empty when neither the flag nor the variable names one. */
  Optional<Path> bundle() {
    return ca == null || ca.isBlank() ? Optional.empty() : Optional.of(Path.of(ca.strip()));
  }

  /** The message of a failed TLS connection to {@code server}: what failed and what to check. */
  static String handshakeFailure(String server, Exception e) {
    return "TLS connection to " + server + " failed (" + e.getMessage() + "): is the server's certificate"
        + " signed by a CA in --tls.ca / SE_TLS_CA (or the JDK's trust store) and issued for this host name,"
        + " and does the server speak TLS?";
  }

  /** The TLS failure behind {@code failure} (a cause), if that is why a call failed. */
  static Optional<SSLException> tlsFailure(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SSLException ssl) {
        return Optional.of(ssl);
      }
    }
    return Optional.empty();
  }

  /** Makes {@code builder} trust the bundle, when one is given and {@code location} is TLS. */
  void configure(FlightClient.Builder builder, Location location) {
    Optional<Path> bundle = bundle();
    if (bundle.isEmpty() || !LocationSchemes.GRPC_TLS.equals(location.getUri().getScheme())) {
      return;
    }
    trust(); // checks the file, naming it
    try {
      builder.useTls().trustedCertificates(new ByteArrayInputStream(Files.readAllBytes(bundle.get())));
    } catch (IOException e) {
      throw SeException.invalid("--tls.ca %s: cannot read the file (%s)", bundle.get(), e.getClass().getSimpleName());
    }
  }
}
