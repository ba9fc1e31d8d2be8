package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.auth.AuthConfig;
import io.storageengine.common.Json;
import io.storageengine.server.ConfigKey;
import io.storageengine.server.EngineServer;
import io.storageengine.server.Role;
import io.storageengine.server.ServerConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code se principal}, {@code se grant} and {@code --token} on the client commands, against a
 * server in {@code --auth.mode tokens}.
 */
class AuthCommandsTest {
  private static final String ADMIN = "cli-admin-0123456789abcdef0123456789abcdef";

  @TempDir static Path dir;
  static EngineServer server;

  @BeforeAll
  static void start() {
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "50ms")
        .with(AuthConfig.MODE, "tokens")
        .with(AuthConfig.BOOTSTRAP_TOKEN, ADMIN), Role.DEV);
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void adminsIssueTokensAndGrantsAndClientsSendThem() throws Exception {
    String address = Cli.address(server);
    Cli.Result refused = Cli.run("catalog", "get", "warehouse", "--server-address", address);
    assertThat(refused.rc()).isNotZero();
    assertThat(refused.err()).contains("HTTP 401");

    Cli.ok("principal", "create", "etl", "--server-address", address, "--token", ADMIN);
    String issued = Cli.ok("principal", "token", "etl", "--expires-in", "P1D", "--server-address", address,
        "--token", ADMIN);
    String token = Json.parse(issued.getBytes(StandardCharsets.UTF_8)).path("token").asText();
    assertThat(token).startsWith("se_");

    Cli.Result forbidden = Cli.run("catalog", "get", "warehouse", "--server-address", address, "--token", token);
    assertThat(forbidden.err()).contains("HTTP 403");
    Cli.ok("grant", "set", "--catalog-id", "warehouse", "etl", "owner", "--server-address", address, "--token", ADMIN);
    assertThat(Cli.ok("grant", "list", "--catalog-id", "warehouse", "--server-address", address, "--token", ADMIN))
        .contains("\"grantee\":\"etl\"", "\"role\":\"owner\"");

    // The principal's token works on every client command: catalog API, table DDL, ingest, SQL.
    assertThat(Cli.ok("catalog", "get", "warehouse", "--server-address", address, "--token", token))
        .contains("warehouse");
    Cli.ok("table", "create", "--catalog-id", "warehouse", "--table", "crm.people", "--schema",
        "id bigint not null, name string", "--server-address", address, "--token", token);
    Path csv = dir.resolve("people.csv");
    Files.writeString(csv, "id,name\n1,ann\n2,bob\n");
    Cli.ok("ingest", "--catalog-id", "warehouse", "--table", "crm.people", csv.toString(),
        "--server-address", address, "--token", token);
    Cli.await(out -> out.contains("2"), "sql", "--catalog-id", "warehouse", "--format", "csv",
        "--server-address", address, "--token", token, "SELECT count(*) AS n FROM default.crm.people");

    Cli.ok("grant", "revoke", "--catalog-id", "warehouse", "etl", "--server-address", address, "--token", ADMIN);
    String id = Json.parse(issued.getBytes(StandardCharsets.UTF_8)).path("id").asText();
    Cli.ok("principal", "revoke", "etl", id, "--server-address", address, "--token", ADMIN);
    assertThat(Cli.run("catalog", "get", "warehouse", "--server-address", address, "--token", token).err())
        .contains("HTTP 401");
  }

  @Test
  void helpNeverShowsAToken() {
    Cli.Result help = Cli.run("sql", "--help");
    assertThat(help.out()).contains("--token").contains("SE_TOKEN");
    assertThat(Cli.run("principal", "--help").out()).contains("create", "token", "revoke");
    assertThat(Cli.run("grant", "--help").out()).contains("set", "list", "revoke");
  }
}
