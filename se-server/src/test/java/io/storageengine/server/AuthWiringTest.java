package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.auth.AuthConfig;
import io.storageengine.auth.AuthMode;
import io.storageengine.catalog.CatalogConfig;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.wal.WalOperation;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
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
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * A server in {@code --auth.mode tokens}: every surface (catalog API, Iceberg REST facade, admin
 * API, Flight ingestion, Flight SQL, the Flight handshake, the JDBC driver) authenticates with
 * the one decorator / interceptor and decides per catalog with {@link Access}; no token text
 * reaches a log line or an error body.
 */
class AuthWiringTest {
  private static final String BOOTSTRAP = "bootstrap-0123456789abcdef0123456789abcdef";

  @TempDir
  static Path dir;
  static EngineServer server;
  static BufferAllocator allocator;
  static final HttpClient HTTP = HttpClient.newHttpClient();
  static final ListAppender<ILoggingEvent> LOGS = new ListAppender<>();
  static final List<String> BODIES = new ArrayList<>();
  static String alice;
  static String bob;

  @BeforeAll
  static void start() throws Exception {
    LOGS.start();
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(LOGS);
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.SECRET_STORE_KEY, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        .with(AuthConfig.BOOTSTRAP_TOKEN, BOOTSTRAP), Role.SERVER);
    server.registry().create("alpha", CatalogConfig.embedded());
    server.registry().create("beta", CatalogConfig.embedded());
    allocator = new RootAllocator();
    assertThat(send("POST", "/principals", BOOTSTRAP, "{\"name\":\"alice\"}").statusCode()).isEqualTo(201);
    assertThat(send("POST", "/principals", BOOTSTRAP, "{\"name\":\"bob\"}").statusCode()).isEqualTo(201);
    alice = issue("alice");
    bob = issue("bob");
    assertThat(send("PUT", "/catalogs/alpha/grants/alice", BOOTSTRAP, "{\"role\":\"reader\"}").statusCode())
        .isEqualTo(204);
    assertThat(send("PUT", "/catalogs/beta/grants/bob", BOOTSTRAP, "{\"role\":\"writer\"}").statusCode())
        .isEqualTo(204);
  }

  @AfterAll
  static void stop() {
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(LOGS);
    if (server != null) {
      server.close();
    }
    allocator.close();
  }

  @Test
  void httpRoutesNeedCredentialsExceptHealth() throws Exception {
    HttpResponse<String> none = send("GET", "/catalogs/alpha", null, null);
    assertThat(none.statusCode()).isEqualTo(401);
    assertThat(none.headers().firstValue("www-authenticate")).hasValue("Bearer");
    assertThat(error(none)).isEqualTo("UNAUTHENTICATED");
    assertThat(send("GET", "/catalogs/alpha", "se_0123456789abcdef_nope", null).statusCode()).isEqualTo(401);
    HttpResponse<String> facade = send("GET", "/catalogs/alpha/v1/config", null, null);
    assertThat(facade.statusCode()).isEqualTo(401);
    assertThat(Json.parse(facade.body().getBytes(StandardCharsets.UTF_8)).path("error").path("type").asText())
        .isEqualTo("NotAuthorizedException");
    assertThat(send("GET", "/metrics", null, null).statusCode()).isEqualTo(401);
    assertThat(send("GET", "/metrics", alice, null).statusCode()).isEqualTo(403);
    assertThat(send("GET", "/metrics", BOOTSTRAP, null).statusCode()).isEqualTo(200);
    assertThat(send("GET", "/health", null, null).statusCode()).isEqualTo(200);
  }

  @Test
  void catalogRoutesDecidePerCatalogAndDoNotRevealWhichCatalogsExist() throws Exception {
    assertThat(send("GET", "/catalogs/alpha", alice, null).statusCode()).isEqualTo(200);
    HttpResponse<String> other = send("GET", "/catalogs/beta", alice, null);
    HttpResponse<String> missing = send("GET", "/catalogs/gamma", alice, null);
    assertThat(other.statusCode()).isEqualTo(403);
    assertThat(missing.statusCode()).isEqualTo(403);
    assertThat(message(missing).replace("gamma", "beta")).isEqualTo(message(other));
    assertThat(send("GET", "/catalogs/alpha/v1/config", alice, null).statusCode()).isEqualTo(200);
    // A reader may not write through the facade, nor create or delete catalogs, nor manage grants.
    assertThat(send("POST", "/catalogs/alpha/v1/namespaces", alice, "{\"namespace\":[\"x\"]}").statusCode())
        .isEqualTo(403);
    assertThat(send("POST", "/catalogs", alice, "{\"catalog_id\":\"mine\",\"type\":\"embedded\"}").statusCode())
        .isEqualTo(403);
    assertThat(send("DELETE", "/catalogs/alpha", alice, null).statusCode()).isEqualTo(403);
    assertThat(send("GET", "/catalogs/alpha/grants", alice, null).statusCode()).isEqualTo(403);
    assertThat(send("POST", "/principals", alice, "{\"name\":\"mallory\"}").statusCode()).isEqualTo(403);
    HttpResponse<String> grants = send("GET", "/catalogs/alpha/grants", BOOTSTRAP, null);
    assertThat(grants.statusCode()).isEqualTo(200);
    assertThat(grants.body()).contains("\"grantee\":\"alice\"", "\"reader\"");
  }

  @Test
  void flightCallsNeedCredentialsAndAReaderGrant() throws Exception {
    try (FlightClient client = FlightClient.builder(allocator, location()).build();
        FlightSqlClient sql = new FlightSqlClient(client)) {
      assertThatThrownBy(() -> sql.execute("SELECT 1", tenant("alpha", null)))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHENTICATED));
      assertThat(sql.execute("SELECT 1", tenant("alpha", alice)).getEndpoints()).hasSize(1);
      for (String catalog : List.of("beta", "gamma")) {
        assertThatThrownBy(() -> sql.execute("SELECT 1", tenant(catalog, alice)))
            .isInstanceOfSatisfying(FlightRuntimeException.class,
                e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHORIZED));
      }
    }
  }

  @Test
  void handshakeTakesBasicAndAnswersWithTheBearerToken() {
    try (FlightClient client = FlightClient.builder(allocator, location()).build()) {
      var bearer = client.authenticateBasicToken("alice", alice);
      assertThat(bearer).isPresent();
      assertThatThrownBy(() -> client.authenticateBasicToken("alice", "wrong"))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHENTICATED));
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void ingestionNeedsAWriterGrant() throws Exception {
    Schema schema = new Schema(List.of(Field.nullable("id", new ArrowType.Int(64, true))));
    try (IngestClient reader = IngestClient.connect(location(), allocator, alice)) {
      assertThatThrownBy(() -> reader.open("alpha", List.of("ns"), "t", WalOperation.UPSERT, schema))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHORIZED));
    }
    try (IngestClient writer = IngestClient.connect(location(), allocator, bob)) {
      // Allowed in: the table does not exist.
      assertThatThrownBy(() -> writer.open("beta", List.of("ns"), "t", WalOperation.UPSERT, schema))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND));
    }
  }

  @Test
  void producerStateIsAuthorizedLikeIngestion() throws Exception {
    try (IngestClient anonymous = IngestClient.connect(location(), allocator)) {
      assertThatThrownBy(() -> anonymous.lastSequence("beta", List.of("ns"), "t", "p-1"))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHENTICATED));
    }
    try (IngestClient reader = IngestClient.connect(location(), allocator, alice)) {
      assertThatThrownBy(() -> reader.lastSequence("alpha", List.of("ns"), "t", "p-1"))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHORIZED));
    }
    try (IngestClient writer = IngestClient.connect(location(), allocator, bob)) {
      assertThatThrownBy(() -> writer.lastSequence("beta", List.of("ns"), "t", "p-1"))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND));
    }
  }

  @Test
  void jdbcDriverSendsTheTokenOfItsUrl() throws Exception {
    String url = "jdbc:arrow-flight-sql://127.0.0.1:" + server.port() + "?useEncryption=false";
    Properties props = new Properties();
    props.setProperty("se-query-metadata", "{\"catalog_id\":\"alpha\"}");
    try (Connection conn = DriverManager.getConnection(url + "&token=" + alice, props);
        Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SELECT 41 + 1 AS n")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getLong("n")).isEqualTo(42);
    }
    assertThatThrownBy(() -> {
      try (Connection conn = DriverManager.getConnection(url, props);
          Statement st = conn.createStatement()) {
        st.executeQuery("SELECT 1");
      }
    }).isInstanceOf(SQLException.class);
  }

  @Test
  void tokensAreRevokedAndNeverLogged() throws Exception {
    assertThat(send("POST", "/principals", BOOTSTRAP, "{\"name\":\"carol\"}").statusCode()).isEqualTo(201);
    HttpResponse<String> issued = send("POST", "/principals/carol/tokens", BOOTSTRAP, "{\"expires_in\":\"P1D\"}");
    JsonNode body = Json.parse(issued.body().getBytes(StandardCharsets.UTF_8));
    String carol = body.path("token").asText();
    assertThat(send("GET", "/catalogs/alpha", carol, null).statusCode()).isEqualTo(403);
    assertThat(send("DELETE", "/principals/carol/tokens/" + body.path("id").asText(), BOOTSTRAP, null).statusCode())
        .isEqualTo(204);
    assertThat(send("GET", "/catalogs/alpha", carol, null).statusCode()).isEqualTo(401);
    List<String> lines;
    synchronized (LOGS.list) {
      lines = LOGS.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }
    assertThat(lines).anyMatch(line -> line.contains("outcome=denied"));
    for (String token : List.of(BOOTSTRAP, alice, bob, carol)) {
      assertThat(lines).noneMatch(line -> line.contains(token));
      synchronized (BODIES) {
        assertThat(BODIES).filteredOn(b -> !b.contains("\"token\"")).noneMatch(b -> b.contains(token));
      }
    }
  }

  @Test
  void seDevDefaultsToNoneSeStartToTokensAndNoneIsRefusedOffLoopback(@TempDir Path other) {
    ServerConfig loopback = ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, other.toString())
        .with(ConfigKey.SECRET_STORE_KEY, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    try (EngineContext dev = EngineContext.builder(loopback).launch(AuthConfig.Launch.DEV).build();
        EngineContext start = EngineContext.builder(loopback).launch(AuthConfig.Launch.START).build()) {
      assertThat(dev.access().mode()).isEqualTo(AuthMode.NONE);
      assertThat(start.access().mode()).isEqualTo(AuthMode.TOKENS);
    }
    ServerConfig everywhere = loopback.with(ConfigKey.SERVER_ADDRESS, "0.0.0.0:0").with(AuthConfig.MODE, "none");
    for (AuthConfig.Launch launch : AuthConfig.Launch.values()) {
      assertThatThrownBy(() -> EngineContext.builder(everywhere).launch(launch).build().close())
          .isInstanceOfSatisfying(SeException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
            assertThat(e.getMessage()).contains("--auth.allow-insecure");
          });
    }
    try (EngineContext insecure = EngineContext.builder(everywhere.with(AuthConfig.ALLOW_INSECURE, "true")).build()) {
      assertThat(insecure.access().mode()).isEqualTo(AuthMode.NONE);
    }
  }

  private static String issue(String principal) throws Exception {
    HttpResponse<String> issued = send("POST", "/principals/" + principal + "/tokens", BOOTSTRAP,
        "{\"expires_in\":\"P1D\"}");
    assertThat(issued.statusCode()).as(issued.body()).isEqualTo(201);
    return Json.parse(issued.body().getBytes(StandardCharsets.UTF_8)).path("token").asText();
  }

  static HttpResponse<String> send(String method, String path, String token, String json) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
        .method(method, json == null ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(json));
    if (json != null) {
      request.header("Content-Type", "application/json");
    }
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    HttpResponse<String> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    synchronized (BODIES) {
      BODIES.add(response.body());
    }
    return response;
  }

  private static String error(HttpResponse<String> response) {
    return Json.parse(response.body().getBytes(StandardCharsets.UTF_8)).path("error").path("code").asText();
  }

  private static String message(HttpResponse<String> response) {
    return Json.parse(response.body().getBytes(StandardCharsets.UTF_8)).path("error").path("message").asText();
  }

  private static Location location() {
    return Location.forGrpcInsecure("127.0.0.1", server.port());
  }

  private static HeaderCallOption tenant(String catalogId, String token) {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"" + catalogId + "\"}");
    if (token != null) {
      headers.insert("authorization", "Bearer " + token);
    }
    return new HeaderCallOption(headers);
  }
}
