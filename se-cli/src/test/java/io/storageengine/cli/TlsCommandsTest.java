package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.common.tls.TlsConfig;
import io.storageengine.server.ConfigKey;
import io.storageengine.server.EngineServer;
import io.storageengine.server.Role;
import io.storageengine.server.ServerConfig;
import io.storageengine.testing.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client commands against a dev server whose listener serves TLS: with {@code --tls.ca} the
 * catalog API, the Iceberg REST facade ({@code se table}), ingestion and {@code se sql} work over
 * {@code https://} and {@code grpc+tls://}; without it they fail saying why.
 */
class TlsCommandsTest {
  @TempDir
  static Path dir;
  static TestCertificates certificates;
  static EngineServer server;

  @BeforeAll
  static void start() {
    certificates = TestCertificates.create(dir.resolve("tls"));
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.resolve("data").toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "50ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "200ms")
        .with(TlsConfig.CERT, certificates.cert().toString())
        .with(TlsConfig.KEY, certificates.key().toString()), Role.DEV);
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void everyClientCommandWorksOverTlsWithTheCaTrusted() throws Exception {
    String https = "https://127.0.0.1:" + server.port();
    String ca = certificates.ca().toString();
    assertThat(Cli.ok("catalog", "get", "warehouse", "--server-address", https, "--tls.ca", ca))
        .contains("catalogs/warehouse");
    Cli.ok("table", "create", "--catalog-id", "warehouse", "--table", "crm.people", "--schema",
        "id bigint not null, name string", "--server-address", https, "--tls.ca", ca);
    Path csv = Files.writeString(dir.resolve("people.csv"), "id,name\n1,ann\n2,bob\n");
    assertThat(Cli.ok("ingest", "--catalog-id", "warehouse", "--table", "crm.people", csv.toString(),
        "--server-address", https, "--tls.ca", ca)).contains("2 rows acknowledged");
    Cli.await(out -> out.contains("2"), "sql", "--catalog-id", "warehouse", "--format", "csv",
        "--server-address", "grpc+tls://localhost:" + server.port(), "--tls.ca", ca,
        "SELECT count(*) AS n FROM default.crm.people");
  }

  @Test
  void withoutTheCaTheCommandsSayTheTlsConnectionFailed() {
    String https = "https://127.0.0.1:" + server.port();
    Cli.Result catalog = Cli.run("catalog", "get", "warehouse", "--server-address", https);
    assertThat(catalog.rc()).isNotZero();
    assertThat(catalog.err()).contains("TLS connection to " + https + " failed", "--tls.ca / SE_TLS_CA");
    Cli.Result sql = Cli.run("sql", "--catalog-id", "warehouse", "--server-address", https, "SELECT 1");
    assertThat(sql.rc()).isEqualTo(1);
    assertThat(sql.err()).contains("TLS connection to " + https + " failed", "--tls.ca / SE_TLS_CA");
    Cli.Result table = Cli.run("table", "describe", "--catalog-id", "warehouse", "--table", "crm.none",
        "--server-address", https);
    assertThat(table.rc()).isNotZero();
    assertThat(table.err()).contains("TLS connection to", "failed", "--tls.ca / SE_TLS_CA");
    Cli.Result plain = Cli.run("catalog", "get", "warehouse", "--server-address", "http://127.0.0.1:" + server.port());
    assertThat(plain.rc()).isNotZero();
    Cli.Result badBundle = Cli.run("catalog", "get", "warehouse", "--server-address", https,
        "--tls.ca", csvLikeFile().toString());
    assertThat(badBundle.rc()).isEqualTo(2);
    assertThat(badBundle.err()).contains("--tls.ca " + csvLikeFile() + ": no PEM certificate");
  }

  private static Path csvLikeFile() {
    Path file = dir.resolve("not-a-ca.pem");
    try {
      return Files.exists(file) ? file : Files.writeString(file, "id,name\n");
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
