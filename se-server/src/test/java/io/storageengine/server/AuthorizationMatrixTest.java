package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.storageengine.auth.AuthConfig;
import io.storageengine.catalog.CatalogConfig;
import io.storageengine.common.Json;
import io.storageengine.ingest.client.IngestClient;
import io.storageengine.wal.WalOperation;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.CancelFlightInfoRequest;
import org.apache.arrow.flight.CloseSessionRequest;
import org.apache.arrow.flight.Criteria;
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
import org.apache.arrow.flight.SessionOptionValueFactory;
import org.apache.arrow.flight.SetSessionOptionsRequest;
import org.apache.arrow.flight.SetSessionOptionsResult;
import org.apache.arrow.flight.impl.FlightServiceGrpc;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.flight.sql.util.TableRef;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Every HTTP route and every Flight / Flight SQL method, called as each kind of caller: no
 * token, a bad token, an expired token, a token of another tenant (owner of another catalog),
 * and a reader, writer, owner and admin of the catalog. Each cell expects refused-unauthenticated
 * (401 / UNAUTHENTICATED), refused-forbidden (403 / UNAUTHORIZED) or allowed (anything else: the
 * request reached its handler). The HTTP cells must cover every route the listener serves and
 * the Flight cells every method of the Flight service. No token text appears in a log line or
 * an answer.
 */
class AuthorizationMatrixTest {
  private static final String BOOTSTRAP = "matrix-bootstrap-0123456789abcdef0123456789";
  private static final String CATALOG = "alpha";
  private static final String OTHER_CATALOG = "beta";

  /** What a cell needs: nothing, any valid credential, or a role on {@link #CATALOG}. */
  enum Level { OPEN, AUTHENTICATED, READ, WRITE, DDL, ADMIN }

  /** The callers, weakest first among the role holders. */
  enum Caller { NONE, BAD, EXPIRED, OTHER_TENANT, READER, WRITER, OWNER, ADMIN }

  enum Outcome { UNAUTHENTICATED, FORBIDDEN, ALLOWED }

  private record HttpCell(String method, String path, String body, Level level) {}

  @FunctionalInterface
  private interface FlightCall {
    /** Makes the call; returns normally when the server answered it (any non-auth error counts as answered). */
    void call(FlightClient client, FlightSqlClient sql, CallOption auth) throws Exception;
  }

  private record FlightCell(String method, String label, Level level, FlightCall call) {}

  @TempDir
  static Path dir;
  static EngineServer server;
  static BufferAllocator allocator;
  static final HttpClient HTTP = HttpClient.newHttpClient();
  static final ListAppender<ILoggingEvent> LOGS = new ListAppender<>();
  static final List<String> ANSWERS = new ArrayList<>();
  static final Map<Caller, String> TOKENS = new LinkedHashMap<>();
  static final AtomicInteger SEQUENCE = new AtomicInteger();

  @BeforeAll
  static void start() throws Exception {
    LOGS.start();
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(LOGS);
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.SECRET_STORE_KEY, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        .with(AuthConfig.BOOTSTRAP_TOKEN, BOOTSTRAP), Role.SERVER);
    server.registry().create(CATALOG, CatalogConfig.embedded());
    server.registry().create(OTHER_CATALOG, CatalogConfig.embedded());
    allocator = new RootAllocator();
    TOKENS.put(Caller.NONE, null);
    TOKENS.put(Caller.BAD, "se_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    TOKENS.put(Caller.EXPIRED, principal("expired", null, null, "PT1S"));
    TOKENS.put(Caller.OTHER_TENANT, principal("stranger", OTHER_CATALOG, "owner", "P1D"));
    TOKENS.put(Caller.READER, principal("reader", CATALOG, "reader", "P1D"));
    TOKENS.put(Caller.WRITER, principal("writer", CATALOG, "writer", "P1D"));
    TOKENS.put(Caller.OWNER, principal("owner", CATALOG, "owner", "P1D"));
    TOKENS.put(Caller.ADMIN, BOOTSTRAP);
    Thread.sleep(1_500); // the PT1S token expires
  }

  @AfterAll
  static void stop() {
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(LOGS);
    if (server != null) {
      server.close();
    }
    allocator.close();
  }

  /** Every route of the listener, each method it answers, at the level it needs. */
  private static List<HttpCell> httpCells() {
    String uuid = UUID.randomUUID().toString();
    int n = SEQUENCE.incrementAndGet();
    return List.of(
        new HttpCell("GET", "/health", null, Level.OPEN),
        new HttpCell("GET", "/metrics", null, Level.ADMIN),
        new HttpCell("POST", "/catalogs", "{\"catalog_id\":\"made" + n + "\",\"config\":{\"type\":\"embedded\"}}",
            Level.ADMIN),
        new HttpCell("GET", "/catalogs/" + CATALOG, null, Level.READ),
        new HttpCell("DELETE", "/catalogs/nonexistent" + n, null, Level.ADMIN),
        new HttpCell("GET", "/catalogs/" + CATALOG + "/tables/" + uuid + "/reconcile", null, Level.READ),
        new HttpCell("GET", "/catalogs/" + CATALOG + "/v1/config", null, Level.READ),
        new HttpCell("GET", "/catalogs/" + CATALOG + "/v1/namespaces", null, Level.READ),
        new HttpCell("HEAD", "/catalogs/" + CATALOG + "/v1/namespaces/nope", null, Level.READ),
        new HttpCell("POST", "/catalogs/" + CATALOG + "/v1/namespaces", "{\"namespace\":[\"ns" + n + "\"]}", Level.DDL),
        new HttpCell("DELETE", "/catalogs/" + CATALOG + "/v1/namespaces/nope", null, Level.DDL),
        // Scan planning, credentials and scan metrics only read: a reader's.
        new HttpCell("POST", "/catalogs/" + CATALOG + "/v1/namespaces/nope/tables/t/plan", "{}", Level.READ),
        new HttpCell("DELETE", "/catalogs/" + CATALOG + "/v1/namespaces/nope/tables/t/plan/p" + n, null, Level.READ),
        new HttpCell("POST", "/catalogs/" + CATALOG + "/v1/namespaces/nope/tables/t/tasks", "{\"plan-task\":\"x\"}",
            Level.READ),
        new HttpCell("GET", "/catalogs/" + CATALOG + "/v1/namespaces/nope/tables/t/credentials", null, Level.READ),
        new HttpCell("POST", "/catalogs/" + CATALOG + "/v1/namespaces/nope/tables/t/metrics", "{}", Level.READ),
        new HttpCell("POST", "/catalogs/" + CATALOG + "/v1/namespaces/nope/tables/t", "{}", Level.DDL),
        new HttpCell("GET", "/catalogs/" + CATALOG + "/grants", null, Level.ADMIN),
        new HttpCell("PUT", "/catalogs/" + CATALOG + "/grants/group:auditors", "{\"role\":\"reader\"}", Level.ADMIN),
        new HttpCell("DELETE", "/catalogs/" + CATALOG + "/grants/nobody", null, Level.ADMIN),
        new HttpCell("POST", "/principals", "{\"name\":\"made" + n + "\"}", Level.ADMIN),
        new HttpCell("DELETE", "/principals/nobody", null, Level.ADMIN),
        new HttpCell("POST", "/principals/nobody/tokens", "{\"expires_in\":\"P1D\"}", Level.ADMIN),
        new HttpCell("DELETE", "/principals/nobody/tokens/0123456789abcdef", null, Level.ADMIN),
        new HttpCell("PUT", "/admins/group:nobody-group", "{}", Level.ADMIN),
        new HttpCell("DELETE", "/admins/nobody", null, Level.ADMIN));
  }

  /** Every method of the Flight service, and the Flight SQL commands and actions on top of them. */
  private static List<FlightCell> flightCells() {
    Schema ids = new Schema(List.of(Field.nullable("id", new ArrowType.Int(64, true))));
    TableRef table = TableRef.of(null, "ns", "t");
    return List.of(
        new FlightCell("Handshake", "handshake", Level.AUTHENTICATED, (c, s, o) -> c.handshake(o)),
        new FlightCell("ListFlights", "list flights", Level.AUTHENTICATED,
            (c, s, o) -> c.listFlights(Criteria.ALL, o).forEach(info -> { })),
        new FlightCell("ListActions", "list actions", Level.AUTHENTICATED,
            (c, s, o) -> c.listActions(o).forEach(a -> { })),
        new FlightCell("GetFlightInfo", "statement query", Level.READ, (c, s, o) -> s.execute("SELECT 1", o)),
        new FlightCell("GetFlightInfo", "sql info", Level.AUTHENTICATED,
            (c, s, o) -> drain(s, s.getSqlInfo(new FlightSql.SqlInfo[] {FlightSql.SqlInfo.FLIGHT_SQL_SERVER_NAME}, o), o)),
        new FlightCell("GetFlightInfo", "xdbc type info", Level.AUTHENTICATED, (c, s, o) -> drain(s, s.getXdbcTypeInfo(o), o)),
        new FlightCell("GetFlightInfo", "table types", Level.AUTHENTICATED, (c, s, o) -> drain(s, s.getTableTypes(o), o)),
        new FlightCell("DoGet", "catalogs", Level.READ, (c, s, o) -> drain(s, s.getCatalogs(o), o)),
        new FlightCell("DoGet", "schemas", Level.READ, (c, s, o) -> drain(s, s.getSchemas(null, null, o), o)),
        new FlightCell("DoGet", "tables", Level.READ, (c, s, o) -> drain(s, s.getTables(null, null, null, null, false, o), o)),
        new FlightCell("DoGet", "primary keys", Level.READ, (c, s, o) -> drain(s, s.getPrimaryKeys(table, o), o)),
        new FlightCell("DoGet", "exported keys", Level.READ, (c, s, o) -> drain(s, s.getExportedKeys(table, o), o)),
        new FlightCell("DoGet", "imported keys", Level.READ, (c, s, o) -> drain(s, s.getImportedKeys(table, o), o)),
        new FlightCell("DoGet", "cross reference", Level.READ, (c, s, o) -> drain(s, s.getCrossReference(table, table, o), o)),
        // A ticket serves only the principal that got it (FlightSqlPrincipalBindingTest): each caller uses its own.
        new FlightCell("DoGet", "statement ticket", Level.READ, (c, s, o) -> drain(s, s.execute("SELECT 1", o), o)),
        new FlightCell("GetSchema", "statement schema", Level.READ, (c, s, o) -> s.getExecuteSchema("SELECT 1", o)),
        new FlightCell("PollFlightInfo", "poll statement", Level.READ, (c, s, o) -> c.pollInfo(FlightDescriptor.command(
            com.google.protobuf.Any.pack(FlightSql.CommandStatementQuery.newBuilder().setQuery("SELECT 1").build())
                .toByteArray()), o)),
        new FlightCell("DoAction", "create prepared statement", Level.READ, (c, s, o) -> s.prepare("SELECT 1", o).close(o)),
        new FlightCell("DoAction", "cancel flight info", Level.READ,
            (c, s, o) -> s.cancelFlightInfo(new CancelFlightInfoRequest(s.execute("SELECT 1", o)), o)),
        new FlightCell("DoAction", "set session catalog", Level.READ, (c, s, o) -> {
          SetSessionOptionsResult result = s.setSessionOptions(new SetSessionOptionsRequest(
              Map.of("catalog", SessionOptionValueFactory.makeSessionOptionValue(CATALOG))), o);
          if (result.hasErrors()) {
            // Refused values are not told apart (forbidden or missing): report them as a refusal.
            throw org.apache.arrow.flight.CallStatus.UNAUTHORIZED.withDescription("session option refused").toRuntimeException();
          }
        }),
        new FlightCell("DoAction", "get session options", Level.AUTHENTICATED,
            (c, s, o) -> s.getSessionOptions(new GetSessionOptionsRequest(), o)),
        new FlightCell("DoAction", "close session", Level.AUTHENTICATED,
            (c, s, o) -> s.closeSession(new CloseSessionRequest(), o)),
        new FlightCell("DoAction", "unknown action", Level.AUTHENTICATED,
            (c, s, o) -> c.doAction(new Action("nope"), o).forEachRemaining(r -> { })),
        new FlightCell("DoPut", "native ingest", Level.WRITE,
            (c, s, o) -> new IngestClient(c, allocator).open(CATALOG, List.of("ns"), "t", WalOperation.UPSERT, ids, o)
                .close()),
        new FlightCell("DoPut", "bulk ingest", Level.WRITE, (c, s, o) -> {
          try (VectorSchemaRoot root = VectorSchemaRoot.create(ids, allocator)) {
            ((BigIntVector) root.getVector(0)).setSafe(0, 1);
            root.setRowCount(1);
            s.executeIngest(root, new FlightSqlClient.ExecuteIngestOptions("t" + SEQUENCE.incrementAndGet(),
                FlightSql.CommandStatementIngest.TableDefinitionOptions.newBuilder()
                    .setIfNotExist(FlightSql.CommandStatementIngest.TableDefinitionOptions.TableNotExistOption
                        .TABLE_NOT_EXIST_OPTION_CREATE).build(), CATALOG, "ns", Map.of()), o);
          }
        }),
        new FlightCell("DoExchange", "exchange", Level.AUTHENTICATED, (c, s, o) -> {
          try (FlightClient.ExchangeReaderWriter exchange = c.doExchange(FlightDescriptor.path("x"), o)) {
            exchange.getReader().next();
          }
        }));
  }

  @Test
  void theCellsCoverEveryRouteAndEveryFlightMethod() {
    Set<String> covered = new LinkedHashSet<>();
    for (String route : server.routes()) {
      boolean prefix = route.startsWith("prefix:");
      String path = prefix ? route.substring("prefix:".length()) : route;
      if (httpCells().stream().anyMatch(c -> prefix ? c.path().startsWith(path) : c.path().equals(path))) {
        covered.add(route);
      }
    }
    assertThat(covered).as("routes with a cell").containsExactlyInAnyOrderElementsOf(server.routes());
    Set<String> methods = new LinkedHashSet<>();
    FlightServiceGrpc.getServiceDescriptor().getMethods()
        .forEach(m -> methods.add(m.getFullMethodName().substring(m.getFullMethodName().lastIndexOf('/') + 1)));
    assertThat(flightCells().stream().map(FlightCell::method).distinct().toList())
        .as("Flight methods with a cell").containsExactlyInAnyOrderElementsOf(methods);
  }

  @Test
  void everyHttpRouteAnswersEachCallerAsItsLevelSays() throws Exception {
    List<String> wrong = new ArrayList<>();
    for (Caller caller : Caller.values()) {
      for (HttpCell cell : httpCells()) {
        HttpResponse<String> response = send(cell, TOKENS.get(caller));
        Outcome actual = response.statusCode() == 401 ? Outcome.UNAUTHENTICATED
            : response.statusCode() == 403 ? Outcome.FORBIDDEN : Outcome.ALLOWED;
        Outcome expected = expected(caller, cell.level());
        if (actual != expected) {
          wrong.add(caller + " " + cell.method() + " " + cell.path() + ": expected " + expected + ", got "
              + response.statusCode() + " " + response.body());
        }
        if (actual == Outcome.UNAUTHENTICATED) {
          assertThat(response.headers().firstValue("www-authenticate")).as(cell.path()).hasValue("Bearer");
        }
      }
    }
    assertThat(wrong).isEmpty();
  }

  @Test
  void everyFlightMethodAnswersEachCallerAsItsLevelSays() throws Exception {
    List<String> wrong = new ArrayList<>();
    for (Caller caller : Caller.values()) {
      for (FlightCell cell : flightCells()) {
        Outcome actual;
        String detail = "";
        try (FlightClient client = FlightClient.builder(allocator,
                Location.forGrpcInsecure("127.0.0.1", server.port())).build();
            FlightSqlClient sql = new FlightSqlClient(client)) {
          cell.call().call(client, sql, callOption(TOKENS.get(caller)));
          actual = Outcome.ALLOWED;
        } catch (FlightRuntimeException e) {
          detail = e.status().code() + " " + e.getMessage();
          synchronized (ANSWERS) {
            ANSWERS.add(String.valueOf(e.getMessage()));
          }
          actual = e.status().code() == FlightStatusCode.UNAUTHENTICATED ? Outcome.UNAUTHENTICATED
              : e.status().code() == FlightStatusCode.UNAUTHORIZED ? Outcome.FORBIDDEN : Outcome.ALLOWED;
        }
        Outcome expected = expected(caller, cell.level());
        if (actual != expected) {
          wrong.add(caller + " " + cell.method() + " (" + cell.label() + "): expected " + expected + ", got "
              + actual + " " + detail);
        }
      }
    }
    assertThat(wrong).isEmpty();
  }

  @Test
  void noTokenAppearsInLogsOrAnswers() throws Exception {
    everyHttpRouteAnswersEachCallerAsItsLevelSays();
    List<String> lines;
    synchronized (LOGS.list) {
      lines = LOGS.list.stream().map(e -> e.getFormattedMessage()
          + (e.getThrowableProxy() == null ? "" : " " + e.getThrowableProxy().getMessage())).toList();
    }
    assertThat(lines).anyMatch(line -> line.contains("outcome=denied"))
        .anyMatch(line -> line.contains("outcome=unauthenticated"));
    for (String token : TOKENS.values()) {
      if (token == null) {
        continue;
      }
      assertThat(lines).noneMatch(line -> line.contains(token));
      synchronized (ANSWERS) {
        assertThat(ANSWERS).noneMatch(answer -> answer.contains(token));
      }
    }
  }

  private static Outcome expected(Caller caller, Level level) {
    if (level == Level.OPEN) {
      return Outcome.ALLOWED;
    }
    if (caller == Caller.NONE || caller == Caller.BAD || caller == Caller.EXPIRED) {
      return Outcome.UNAUTHENTICATED;
    }
    if (level == Level.AUTHENTICATED) {
      return Outcome.ALLOWED;
    }
    Level held = switch (caller) {
      case READER -> Level.READ;
      case WRITER -> Level.WRITE;
      case OWNER -> Level.DDL;
      case ADMIN -> Level.ADMIN;
      default -> Level.AUTHENTICATED;
    };
    return held.compareTo(level) >= 0 ? Outcome.ALLOWED : Outcome.FORBIDDEN;
  }

  private static String principal(String name, String catalog, String role, String expiresIn) throws Exception {
    assertThat(send(new HttpCell("POST", "/principals", "{\"name\":\"" + name + "\"}", Level.ADMIN), BOOTSTRAP)
        .statusCode()).isEqualTo(201);
    HttpResponse<String> issued = send(new HttpCell("POST", "/principals/" + name + "/tokens",
        "{\"expires_in\":\"" + expiresIn + "\"}", Level.ADMIN), BOOTSTRAP);
    assertThat(issued.statusCode()).isEqualTo(201);
    if (catalog != null) {
      assertThat(send(new HttpCell("PUT", "/catalogs/" + catalog + "/grants/" + name,
          "{\"role\":\"" + role + "\"}", Level.ADMIN), BOOTSTRAP).statusCode()).isEqualTo(204);
    }
    return Json.parse(issued.body().getBytes(StandardCharsets.UTF_8)).path("token").asText();
  }

  private static HttpResponse<String> send(HttpCell cell, String token) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + cell.path()))
        .method(cell.method(), cell.body() == null ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(cell.body()));
    if (cell.body() != null) {
      request.header("Content-Type", "application/json");
    }
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    HttpResponse<String> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    if (!response.body().contains("\"token\"")) {
      synchronized (ANSWERS) {
        ANSWERS.add(response.body());
      }
    }
    return response;
  }

  private static HeaderCallOption callOption(String token) {
    CallHeaders headers = new FlightCallHeaders();
    headers.insert("se-query-metadata", "{\"catalog_id\":\"" + CATALOG + "\"}");
    if (token != null) {
      headers.insert("authorization", "Bearer " + token);
    }
    return new HeaderCallOption(headers);
  }

  private static void drain(FlightSqlClient sql, FlightInfo info, CallOption option) throws Exception {
    try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), option)) {
      while (stream.next()) {
        // read everything: errors of a DoGet arrive with the stream
      }
    }
  }
}
