package io.storageengine.testing;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A certificate authority a test creates, and a server certificate it signed for
 * {@code 127.0.0.1}, {@code ::1} and {@code localhost}, written as PEM files into a directory:
 * {@link #ca()} (what clients trust, {@code --tls.ca}), {@link #cert()} and {@link #key()}
 * (unencrypted PKCS#8; what the listener serves, {@code --tls.cert} / {@code --tls.key}).
 * Every call of {@link #create} makes a new CA, so two of them do not trust each other.
 */
public final class TestCertificates {
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Path ca;
  private final Path cert;
  private final Path key;
  private final KeyPair serverKeys;

  private TestCertificates(Path ca, Path cert, Path key, KeyPair serverKeys) {
    this.ca = ca;
    this.cert = cert;
    this.key = key;
    this.serverKeys = serverKeys;
  }

  /** A new CA and a server certificate for the loopback names, as {@code ca.pem}, {@code server.pem}, {@code server.key}. */
  public static TestCertificates create(Path directory) {
    try {
      Files.createDirectories(directory);
      KeyPair caKeys = rsa();
      X500Name caName = new X500Name("CN=storage-engine test CA " + Long.toHexString(RANDOM.nextLong()));
      X509Certificate caCert = sign(caName, caKeys, caName, caKeys, true, null);
      KeyPair serverKeys = rsa();
      GeneralNames names = new GeneralNames(new GeneralName[] {
          new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
          new GeneralName(GeneralName.iPAddress, "::1"),
          new GeneralName(GeneralName.dNSName, "localhost")});
      X509Certificate serverCert = sign(new X500Name("CN=localhost"), serverKeys, caName, caKeys, false, names);
      Path ca = write(directory.resolve("ca.pem"), pem(caCert));
      Path cert = write(directory.resolve("server.pem"), pem(serverCert) + pem(caCert));
      Path key = write(directory.resolve("server.key"), pem(new JcaPKCS8Generator(serverKeys.getPrivate(), null)));
      return new TestCertificates(ca, cert, key, serverKeys);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (GeneralSecurityException | OperatorCreationException e) {
      throw new IllegalStateException("cannot create test certificates", e);
    }
  }

  /** The CA certificate (PEM): what clients of the server trust. */
  public Path ca() {
    return ca;
  }

  /** The server certificate followed by the CA's (PEM). */
  public Path cert() {
    return cert;
  }

  /** The server certificate's private key, unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY}). */
  public Path key() {
    return key;
  }

  /** The same key as {@link #key()} in PKCS#1 form ({@code BEGIN RSA PRIVATE KEY}), written next to it. */
  public Path pkcs1Key() {
    try {
      return write(key.resolveSibling("server.pkcs1.key"), pem(serverKeys.getPrivate()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static KeyPair rsa() throws GeneralSecurityException {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
    generator.initialize(2048, RANDOM);
    return generator.generateKeyPair();
  }

  private static X509Certificate sign(X500Name subject, KeyPair subjectKeys, X500Name issuer, KeyPair issuerKeys,
      boolean authority, GeneralNames names) throws GeneralSecurityException, OperatorCreationException, IOException {
    Instant now = Instant.now();
    X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(issuer, new BigInteger(64, RANDOM),
        Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(2))), subject,
        subjectKeys.getPublic());
    JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
    builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(authority));
    builder.addExtension(Extension.subjectKeyIdentifier, false,
        extensions.createSubjectKeyIdentifier(subjectKeys.getPublic()));
    builder.addExtension(Extension.authorityKeyIdentifier, false,
        extensions.createAuthorityKeyIdentifier(issuerKeys.getPublic()));
    if (authority) {
      builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
    } else {
      builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
      builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
      builder.addExtension(Extension.subjectAlternativeName, false, names);
    }
    ContentSigner signer = new JcaContentSignerBuilder("SHA256withRSA").build(issuerKeys.getPrivate());
    return new JcaX509CertificateConverter().getCertificate(builder.build(signer));
  }

  private static String pem(Object object) throws IOException {
    StringWriter text = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(text)) {
      writer.writeObject(object);
    }
    return text.toString();
  }

  private static Path write(Path file, String text) throws IOException {
    return Files.writeString(file, text, StandardCharsets.US_ASCII);
  }
}
