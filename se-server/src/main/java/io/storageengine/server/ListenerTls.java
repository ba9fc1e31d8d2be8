package io.storageengine.server;

import com.linecorp.armeria.server.ServerBuilder;
import io.storageengine.common.tls.TlsConfig;
import java.net.InetSocketAddress;

/**
 * How every role's listener binds its port: HTTPS (and so gRPC over TLS, on the same port) when
 * the process has {@code --tls.cert} and {@code --tls.key}, plain HTTP and gRPC otherwise. A TLS
 * port answers nothing in plain text.
 */
public final class ListenerTls {
  private ListenerTls() {}

  /** Adds the port of {@code address} to {@code builder}, with TLS when {@code tls} serves it. */
  public static ServerBuilder bind(ServerBuilder builder, InetSocketAddress address, TlsConfig tls) {
    // A fresh, resolved address: the configured one is unresolved (host names are allowed).
    InetSocketAddress bind = new InetSocketAddress(address.getHostString(), address.getPort());
    if (tls.identity().isEmpty()) {
      return builder.http(bind);
    }
    TlsConfig.Identity identity = tls.identity().get();
    return builder.https(bind).tls(identity.key(), identity.chain());
  }

  /** {@code https} or {@code http}: the scheme of URLs of a listener with {@code tls}. */
  public static String scheme(TlsConfig tls) {
    return tls.serves() ? "https" : "http";
  }
}
