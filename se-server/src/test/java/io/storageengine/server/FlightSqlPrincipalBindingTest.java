package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.storageengine.auth.AuthConfig;
import io.storageengine.catalog.CatalogConfig;
import io.storageengine.common.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import java.util.UUID;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CancelFlightInfoRequest;
import org.apache.arrow.flight.CloseSessionRequest;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.GetSessionOptionsRequest;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.SessionOptionValueFactory;
import org.apache.arrow.flight.SetSessionOptionsRequest;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flight SQL sessions, prepared statement handles and tickets belong to the principal whose call
 * created them: two readers of the same catalog (tokens mode), each refused PERMISSION_DENIED
 * (Flight UNAUTHORIZED) on what the other created, with the wording of every other refusal.
 */
class FlightSqlPrincipalBindingTest {
  private static final String BOOTSTRAP = "binding-bootstrap-0123456789abcdef0123456789";
  private static final String CATALOG = "alpha";

  @TempDir
  static Path dir;
  static EngineServer server;
  static BufferAllocator allocator;
  static FlightClient client;
  static FlightSqlClient sql;
  static String ann;
  static String bob;

  @BeforeAll
  static void start() throws Exception {
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.SECRET_STORE_KEY, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        .with(AuthConfig.BOOTSTRAP_TOKEN, BOOTSTRAP), Role.SERVER);
    server.registry().create(CATALOG, CatalogConfig.embedded());
    ann = reader("ann");
    bob = reader("bob");
    allocator = new RootAllocator();
    client = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.port())).build();
    sql = new FlightSqlClient(client);
  }

  @AfterAll
  static void stop() throws Exception {
    if (sql != null) {
      sql.close();
    }
    if (server != null) {
      server.close();
    }
    allocator.close();
  }

  @Test
  void aSessionServesOnlyThePrincipalThatOpenedIt() throws Exception {
    String session = "arrow_flight_session_id=" + UUID.randomUUID();
    assertThat(sql.setSessionOptions(new SetSessionOptionsRequest(Map.of("catalog",
        SessionOptionValueFactory.makeSessionOptionValue(CATALOG))), call(ann, session, false)).hasErrors()).isFalse();
    // Ann's session selects her catalog: a statement without the header runs.
    drain(sql.execute("SELECT 1", call(ann, session, false)), call(ann, session, false));
    assertThat(sql.getSessionOptions(new GetSessionOptionsRequest(), call(ann, session, false)).getSessionOptions())
        .containsKey("catalog");

    refused(() -> sql.execute("SELECT 1", call(bob, session, false)), "bob", "this Flight SQL session");
    // Also when a header selects the catalog: the session presented is still not Bob's.
    refused(() -> sql.execute("SELECT 1", call(bob, session, true)), "bob", "this Flight SQL session");
    refused(() -> sql.setSessionOptions(new SetSessionOptionsRequest(Map.of("catalog",
        SessionOptionValueFactory.makeSessionOptionValue(CATALOG))), call(bob, session, false)), "bob",
        "this Flight SQL session");
    refused(() -> sql.getSessionOptions(new GetSessionOptionsRequest(), call(bob, session, false)), "bob",
        "this Flight SQL session");
    refused(() -> sql.closeSession(new CloseSessionRequest(), call(bob, session, false)), "bob",
        "this Flight SQL session");

    // Bob's refusals changed nothing: the session is still Ann's, with her catalog.
    assertThat(sql.getSessionOptions(new GetSessionOptionsRequest(), call(ann, session, false)).getSessionOptions())
        .containsKey("catalog");
  }

  @Test
  void aTicketServesOnlyThePrincipalThatGotIt() throws Exception {
    FlightInfo info = sql.execute("SELECT 42 AS x", call(ann, null, true));
    refused(() -> drain(info, call(bob, null, true)), "bob", "this ticket");
    refused(() -> sql.cancelFlightInfo(new CancelFlightInfoRequest(info), call(bob, null, true)), "bob",
        "this ticket");
    drain(info, call(ann, null, true));
  }

  @Test
  void aPreparedStatementHandleServesOnlyThePrincipalThatPreparedIt() throws Exception {
    ByteString handle = prepare("SELECT 7 AS seven", call(ann, null, true));
    FlightDescriptor execute = FlightDescriptor.command(Any.pack(FlightSql.CommandPreparedStatementQuery.newBuilder()
        .setPreparedStatementHandle(handle).build()).toByteArray());
    refused(() -> client.getInfo(execute, call(bob, null, true)), "bob", "this prepared statement");
    refused(() -> client.getSchema(execute, call(bob, null, true)), "bob", "this prepared statement");
    drain(client.getInfo(execute, call(ann, null, true)), call(ann, null, true));
  }

  /** The handle of a prepared statement, created by a raw DoAction (the client class hides it). */
  private static ByteString prepare(String query, HeaderCallOption option) throws Exception {
    Action action = new Action("CreatePreparedStatement", Any.pack(
        FlightSql.ActionCreatePreparedStatementRequest.newBuilder().setQuery(query).build()).toByteArray());
    Iterator<Result> results = client.doAction(action, option);
    Result result = results.next();
    while (results.hasNext()) {
      results.next();
    }
    return Any.parseFrom(result.getBody()).unpack(FlightSql.ActionCreatePreparedStatementResult.class)
        .getPreparedStatementHandle();
  }

  private static void refused(ThrowingCallable call, String principal, String what) {
    assertThatThrownBy(call).isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
      assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHORIZED);
      assertThat(e.getMessage()).contains("permission denied: principal `" + principal + "` may not use " + what);
    });
  }

  private static void drain(FlightInfo info, HeaderCallOption option) throws Exception {
    try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), option)) {
      while (stream.next()) {
        // errors of a DoGet arrive with the stream
      }
    }
  }

  /** A call as the principal of {@code token}, presenting {@code cookie} and selecting the catalog by header if asked. */
  private static HeaderCallOption call(String token, String cookie, boolean header) {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("authorization", "Bearer " + token);
    if (cookie != null) {
      headers.insert("cookie", cookie);
    }
    if (header) {
      headers.insert("se-query-metadata", "{\"catalog_id\":\"" + CATALOG + "\"}");
    }
    return new HeaderCallOption(headers);
  }

  /** A principal with a token that reads {@link #CATALOG}. */
  private static String reader(String name) throws Exception {
    assertThat(post("/principals", "{\"name\":\"" + name + "\"}").statusCode()).isEqualTo(201);
    HttpResponse<String> issued = post("/principals/" + name + "/tokens", "{\"expires_in\":\"P1D\"}");
    assertThat(issued.statusCode()).isEqualTo(201);
    HttpResponse<String> granted = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + server.port() + "/catalogs/" + CATALOG + "/grants/" + name))
        .header("Authorization", "Bearer " + BOOTSTRAP).header("Content-Type", "application/json")
        .PUT(HttpRequest.BodyPublishers.ofString("{\"role\":\"reader\"}")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(granted.statusCode()).isEqualTo(204);
    return Json.parse(issued.body().getBytes(StandardCharsets.UTF_8)).path("token").asText();
  }

  private static HttpResponse<String> post(String path, String body) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
        .header("Authorization", "Bearer " + BOOTSTRAP).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
