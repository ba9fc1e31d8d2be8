package io.storageengine.secretstore;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A self-signed certificate for 127.0.0.1 that the test makes with the JDK's keytool, and SSL
 * contexts for a server presenting it and a client trusting only it.
 */
final class TestTls {
  private static final char[] PASSWORD = "test-keystore".toCharArray();
  private final KeyStore keyStore;

  private TestTls(KeyStore keyStore) {
    this.keyStore = keyStore;
  }

  static TestTls generate() throws Exception {
    Path dir = Files.createTempDirectory("se-test-tls");
    Path file = dir.resolve("server.p12");
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    Process p = new ProcessBuilder(keytool.toString(), "-genkeypair", "-alias", "server", "-keyalg", "EC",
        "-groupname", "secp256r1", "-dname", "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1,dns:localhost",
        "-validity", "2", "-storetype", "PKCS12", "-keystore", file.toString(),
        "-storepass", new String(PASSWORD), "-keypass", new String(PASSWORD))
        .redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException("keytool failed: " + new String(out, java.nio.charset.StandardCharsets.UTF_8));
    }
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(file)) {
      ks.load(in, PASSWORD);
    }
    Files.delete(file);
    Files.delete(dir);
    return new TestTls(ks);
  }

  SSLContext server() throws Exception {
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(keyStore, PASSWORD);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf.getKeyManagers(), null, null);
    return ctx;
  }

  SSLContext client() throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("server", keyStore.getCertificate("server"));
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    return ctx;
  }
}
