package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.sun.net.httpserver.HttpServer;
import io.storageengine.auth.AuthConfig;
import io.storageengine.catalog.CatalogConfig;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server in {@code --auth.mode oidc} against an issuer the test serves (its own key, its JWKS):
 * JWT access tokens authenticate on HTTP and Flight, a grant to an OIDC group authorizes, and the
 * bootstrap token is the first admin.
 */
class OidcServerTest {
  private static final String BOOTSTRAP = "oidc-bootstrap-0123456789abcdef0123456789";
  private static final String AUDIENCE = "storage-engine";

  @TempDir static Path dir;
  static HttpServer issuerServer;
  static String issuer;
  static RSAKey key;
  static EngineServer server;
  static final HttpClient HTTP = HttpClient.newHttpClient();

  @BeforeAll
  static void start() throws Exception {
    key = new RSAKeyGenerator(2048).keyID("k1").generate();
    issuerServer = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    issuer = "http://127.0.0.1:" + issuerServer.getAddress().getPort() + "/realms/lake";
    byte[] jwks = new JWKSet(key.toPublicJWK()).toString().getBytes(StandardCharsets.UTF_8);
    issuerServer.createContext("/realms/lake/certs", exchange -> {
      exchange.getResponseHeaders().add("Content-Type", "application/json");
      exchange.sendResponseHeaders(200, jwks.length);
      exchange.getResponseBody().write(jwks);
      exchange.close();
    });
    issuerServer.start();
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.SECRET_STORE_KEY, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        .with(AuthConfig.OIDC_ISSUER, issuer)
        .with(AuthConfig.OIDC_JWKS_URI, issuer + "/certs")
        .with(AuthConfig.OIDC_AUDIENCE, AUDIENCE)
        .with(AuthConfig.OIDC_GROUPS_CLAIM, "groups")
        // Last: every step is validated, and oidc mode needs the issuer and audience first.
        .with(AuthConfig.MODE, "oidc")
        .with(AuthConfig.BOOTSTRAP_TOKEN, BOOTSTRAP), Role.SERVER);
    server.registry().create("alpha", CatalogConfig.embedded());
    server.registry().create("beta", CatalogConfig.embedded());
    assertThat(send("PUT", "/catalogs/alpha/grants/group:analysts", BOOTSTRAP, "{\"role\":\"reader\"}").statusCode())
        .isEqualTo(204);
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
    if (issuerServer != null) {
      issuerServer.stop(0);
    }
  }

  @Test
  void groupGrantsAuthorizeTheIssuersTokens() throws Exception {
    String analyst = jwt("alice", AUDIENCE, List.of("analysts"), Instant.now().plusSeconds(300));
    assertThat(send("GET", "/catalogs/alpha", analyst, null).statusCode()).isEqualTo(200);
    assertThat(send("GET", "/catalogs/beta", analyst, null).statusCode()).isEqualTo(403);
    String outsider = jwt("bob", AUDIENCE, List.of("sales"), Instant.now().plusSeconds(300));
    assertThat(send("GET", "/catalogs/alpha", outsider, null).statusCode()).isEqualTo(403);
    // Principals belong to the issuer: UNSUPPORTED.
    assertThat(send("POST", "/principals", BOOTSTRAP, "{\"name\":\"etl\"}").statusCode()).isEqualTo(400);

    try (BufferAllocator allocator = new RootAllocator();
        FlightClient client = FlightClient.builder(allocator,
            Location.forGrpcInsecure("127.0.0.1", server.port())).build();
        FlightSqlClient sql = new FlightSqlClient(client)) {
      assertThat(sql.execute("SELECT 1", call("alpha", analyst)).getEndpoints()).hasSize(1);
      assertThatThrownBy(() -> sql.execute("SELECT 1", call("alpha", outsider)))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHORIZED));
    }
  }

  @Test
  void expiredOrForeignTokensAreUnauthenticated() throws Exception {
    String expired = jwt("alice", AUDIENCE, List.of("analysts"), Instant.now().minusSeconds(600));
    String otherAudience = jwt("alice", "another-app", List.of("analysts"), Instant.now().plusSeconds(300));
    for (String token : List.of(expired, otherAudience)) {
      HttpResponse<String> refused = send("GET", "/catalogs/alpha", token, null);
      assertThat(refused.statusCode()).isEqualTo(401);
      assertThat(refused.headers().firstValue("www-authenticate")).hasValue("Bearer");
      assertThat(refused.body()).doesNotContain(token);
    }
  }

  private static String jwt(String subject, String audience, List<String> groups, Instant expires) throws Exception {
    SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).keyID("k1").build(),
        new JWTClaimsSet.Builder().issuer(issuer).audience(audience).subject(subject).claim("groups", groups)
            .issueTime(new Date()).expirationTime(Date.from(expires)).build());
    jwt.sign(new RSASSASigner(key));
    return jwt.serialize();
  }

  private static HttpResponse<String> send(String method, String path, String token, String json) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
        .method(method, json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json))
        .header("Authorization", "Bearer " + token);
    if (json != null) {
      request.header("Content-Type", "application/json");
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static HeaderCallOption call(String catalog, String token) {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"" + catalog + "\"}");
    headers.insert("authorization", "Bearer " + token);
    return new HeaderCallOption(headers);
  }
}
