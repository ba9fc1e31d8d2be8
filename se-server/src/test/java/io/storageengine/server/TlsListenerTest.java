package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.auth.AuthConfig;
import io.storageengine.catalog.CatalogConfig;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.common.tls.ClientTrust;
import io.storageengine.common.tls.TlsConfig;
import io.storageengine.ingest.client.BearerToken;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.testing.TestCertificates;
import io.storageengine.wal.WalOperation;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server whose listener serves TLS ({@code --tls.cert}, {@code --tls.key}) with a certificate
 * of a CA the test creates: HTTPS, Flight ingestion, Flight SQL and the JDBC driver work for
 * clients that trust the CA, with tokens; clients that do not, and plain-text clients, fail at the
 * handshake.
 */
class TlsListenerTest {
  private static final String ADMIN = "admin-0123456789abcdef0123456789abcdef";

  @TempDir
  static Path dir;
  static TestCertificates certificates;
  static EngineServer server;
  static BufferAllocator allocator;

  @BeforeAll
  static void start() throws Exception {
    certificates = TestCertificates.create(dir.resolve("tls"));
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.resolve("data").toString())
        .with(ConfigKey.SECRET_STORE_KEY, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "100ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "200ms")
        .with(AuthConfig.MODE, "tokens")
        .with(AuthConfig.BOOTSTRAP_TOKEN, ADMIN)
        .with(TlsConfig.CERT, certificates.cert().toString())
        .with(TlsConfig.KEY, certificates.key().toString()), Role.DEV);
    allocator = new RootAllocator();
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
    if (allocator != null) {
      allocator.close();
    }
  }

  private static HttpClient trusting(Path ca) {
    return HttpClient.newBuilder().sslContext(ClientTrust.of("--tls.ca", ca).sslContext()).build();
  }

  private static HttpResponse<String> get(HttpClient client, String url, String token) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void httpsAnswersWithTheCaTrustedAndTokensStillDecide() throws Exception {
    server.registry().create("https", CatalogConfig.embedded());
    HttpClient client = trusting(certificates.ca());
    String base = "https://127.0.0.1:" + server.port();
    assertThat(get(client, base + "/health", null).statusCode()).isEqualTo(200);
    HttpResponse<String> catalog = get(client, base + "/catalogs/https", ADMIN);
    assertThat(catalog.statusCode()).as(catalog.body()).isEqualTo(200);
    assertThat(Json.MAPPER.readTree(catalog.body()).path("name").asText()).isEqualTo("catalogs/https");
    HttpResponse<String> anonymous = get(client, base + "/catalogs/https", null);
    assertThat(anonymous.statusCode()).isEqualTo(401);
    assertThat(anonymous.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
    // The host name is verified too: `localhost` is in the certificate, so it works as well.
    assertThat(get(client, "https://localhost:" + server.port() + "/health", null).statusCode()).isEqualTo(200);
  }

  @Test
  void flightIngestionAndFlightSqlWorkOverTlsAndTheJdbcDriverReadsTheRows() throws Exception {
    server.registry().create("flight", CatalogConfig.embedded());
    var table = Tables.create(server.registry().catalog("flight"), TableIdentifier.parse("events.clicks"),
        TableDefinition.builder("id bigint not null, page string").build());
    Location location = Location.forGrpcTls("127.0.0.1", server.port());
    try (IngestClient client = IngestClient.connect(location, allocator, certificates.ca(), ADMIN);
        VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(table.schema()), allocator);
        IngestStream stream = client.open("flight", List.of("events"), "clicks", WalOperation.UPSERT,
            root.getSchema())) {
      root.allocateNew();
      ((BigIntVector) root.getVector(0)).setSafe(0, 1);
      ((VarCharVector) root.getVector(1)).setSafe(0, "/p".getBytes(StandardCharsets.UTF_8));
      root.setRowCount(1);
      stream.send(root).get();
      stream.finish();
    }

    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"flight\"}");
    HeaderCallOption catalog = new HeaderCallOption(headers);
    try (InputStream ca = Files.newInputStream(certificates.ca());
        FlightClient flight = FlightClient.builder(allocator, location).useTls().trustedCertificates(ca)
            .intercept(new BearerToken(ADMIN)).build();
        FlightSqlClient sql = new FlightSqlClient(flight)) {
      FlightInfo info = sql.execute("SELECT 41 + 1 AS n", catalog);
      try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), catalog)) {
        assertThat(stream.next()).isTrue();
        assertThat(((Number) stream.getRoot().getVector(0).getObject(0)).longValue()).isEqualTo(42);
      }
    }

    // The Flight SQL JDBC driver: useEncryption=true (its default) and the CA as tlsRootCerts.
    String url = "jdbc:arrow-flight-sql://127.0.0.1:" + server.port() + "?useEncryption=true&tlsRootCerts="
        + certificates.ca() + "&token=" + ADMIN;
    Properties props = new Properties();
    props.setProperty("se-query-metadata", "{\"catalog_id\":\"flight\"}");
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    long rows = -1;
    while (rows != 1 && System.nanoTime() < deadline) {
      try (Connection conn = DriverManager.getConnection(url, props);
          Statement st = conn.createStatement();
          ResultSet rs = st.executeQuery("SELECT count(*) AS n FROM default.events.clicks")) {
        assertThat(rs.next()).isTrue();
        rows = rs.getLong("n");
      }
      if (rows != 1) {
        Thread.sleep(200);
      }
    }
    assertThat(rows).as("the reconciled row, read through the JDBC driver over TLS").isEqualTo(1);
  }

  @Test
  void clientsThatDoNotTrustTheCaFailTheHandshake() {
    String url = "https://127.0.0.1:" + server.port() + "/health";
    // The JDK's trust store, and a CA other than the server's.
    assertThatThrownBy(() -> get(HttpClient.newHttpClient(), url, null))
        .isInstanceOf(SSLHandshakeException.class).hasMessageContaining("PKIX path building failed");
    TestCertificates other = TestCertificates.create(dir.resolve("other"));
    assertThatThrownBy(() -> get(trusting(other.ca()), url, null))
        .isInstanceOf(SSLHandshakeException.class).hasMessageContaining("PKIX path building failed");

    Location location = Location.forGrpcTls("127.0.0.1", server.port());
    assertThatThrownBy(() -> {
      try (IngestClient client = IngestClient.connect(location, allocator, other.ca(), ADMIN)) {
        client.open("flight", List.of("events"), "clicks", WalOperation.UPSERT,
            IcebergArrowSchemas.toArrow(TableDefinition.builder("id bigint not null").build().schema()));
      }
    }).isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
      assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAVAILABLE);
      assertThat(causes(e)).anyMatch(SSLException.class::isInstance);
    });
  }

  @Test
  void plainTextClientsGetNothingFromATlsPort() throws Exception {
    assertThatThrownBy(() -> get(HttpClient.newHttpClient(), "http://127.0.0.1:" + server.port() + "/health", null))
        .isInstanceOf(IOException.class);
    try (FlightClient plain = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.port()))
        .intercept(new BearerToken(ADMIN)).build();
        FlightSqlClient sql = new FlightSqlClient(plain)) {
      assertThatThrownBy(() -> sql.execute("SELECT 1"))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAVAILABLE));
    }
  }

  @Test
  void theJdbcDriverWithoutTheCaIsRefused() {
    String url = "jdbc:arrow-flight-sql://127.0.0.1:" + server.port() + "?useEncryption=true&token=" + ADMIN;
    assertThatThrownBy(() -> {
      try (Connection conn = DriverManager.getConnection(url, new Properties());
          Statement st = conn.createStatement()) {
        st.executeQuery("SELECT 1");
      }
    }).isInstanceOf(SQLException.class);
  }

  private static List<Throwable> causes(Throwable t) {
    List<Throwable> all = new java.util.ArrayList<>();
    for (Throwable c = t; c != null; c = c.getCause()) {
      all.add(c);
    }
    return all;
  }

  @Test
  void aCertificateWithoutItsKeyOrABadFileRefusesToStart() throws Exception {
    ServerConfig base = ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.resolve("refused").toString())
        .with(ConfigKey.SECRET_STORE_KEY, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        .with(AuthConfig.MODE, "none");
    assertThatThrownBy(() -> EngineServer.start(base.with(TlsConfig.CERT, certificates.cert().toString()), Role.SERVER))
        .isInstanceOfSatisfying(SeException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessage("--tls.cert is given without --tls.key: TLS needs both the certificate and its key");
    assertThatThrownBy(() -> BrokerProcess.start(base.with(TlsConfig.KEY, certificates.key().toString())))
        .hasMessage("--tls.key is given without --tls.cert: TLS needs both the certificate and its key");

    ServerConfig withCert = base.with(TlsConfig.CERT, certificates.cert().toString());
    Path missing = dir.resolve("missing.key");
    assertThatThrownBy(() -> EngineServer.start(withCert.with(TlsConfig.KEY, missing.toString()), Role.SERVER))
        .hasMessage("--tls.key " + missing + ": no such file");
    assertThatThrownBy(() -> withCert.with(TlsConfig.KEY, certificates.pkcs1Key().toString()).tls())
        .hasMessageStartingWith("--tls.key " + certificates.pkcs1Key() + ": a PKCS#1 / SEC 1 key (BEGIN RSA PRIVATE KEY),"
            + " not PKCS#8; convert it: openssl pkcs8 -topk8 -nocrypt");
    assertThatThrownBy(() -> withCert.with(TlsConfig.KEY, certificates.cert().toString()).tls())
        .hasMessage("--tls.key " + certificates.cert() + ": no PEM private key (-----BEGIN PRIVATE KEY-----) in the file");
    TestCertificates other = TestCertificates.create(dir.resolve("mismatch"));
    assertThatThrownBy(() -> withCert.with(TlsConfig.KEY, other.key().toString()).tls())
        .hasMessage("--tls.key " + other.key() + ": the key does not belong to the first certificate of --tls.cert "
            + certificates.cert());

    Path notPem = Files.writeString(dir.resolve("not.pem"), "hello\n");
    assertThatThrownBy(() -> base.with(TlsConfig.CERT, notPem.toString())
        .with(TlsConfig.KEY, certificates.key().toString()).tls())
        .hasMessage("--tls.cert " + notPem + ": no PEM certificate (-----BEGIN CERTIFICATE-----) in the file");
    assertThatThrownBy(() -> base.with(TlsConfig.CA, notPem.toString()).tls())
        .hasMessage("--tls.ca " + notPem + ": no PEM certificate (-----BEGIN CERTIFICATE-----) in the file");
    Path binary = Files.write(dir.resolve("cert.der"), new byte[] {0x30, (byte) 0x82, (byte) 0xff, 0x01});
    assertThatThrownBy(() -> base.with(TlsConfig.CERT, binary.toString())
        .with(TlsConfig.KEY, certificates.key().toString()).tls())
        .hasMessageStartingWith("--tls.cert " + binary + ": not a PEM file");
  }
}
