package io.storageengine.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.Json;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code se catalog create|get|delete}: a client of the server's catalog API. */
@Command(name = "catalog", mixinStandardHelpOptions = true, description = "Manage tenant catalogs on a running server.",
    subcommands = {CatalogCommand.Create.class, CatalogCommand.Get.class, CatalogCommand.Delete.class})
final class CatalogCommand {

  abstract static class Base implements Callable<Integer> {
    @Option(names = "--server-address", defaultValue = "http://127.0.0.1:7777",
        description = "Server to talk to (default ${DEFAULT-VALUE}).")
    String serverAddress;

    @CommandLine.Mixin
    TokenOption token;

    @CommandLine.Mixin
    TlsOption tls;

    HttpApi api() {
      return new HttpApi(serverAddress, token.value(), tls.trust());
    }

    int print(HttpResponse<String> response, int expected) {
      if (response.statusCode() == expected) {
        if (!response.body().isEmpty()) {
          System.out.println(response.body());
        }
        return 0;
      }
      String body = response.body();
      System.err.println("se: HTTP " + response.statusCode() + (body.isEmpty() ? "" : ": " + body));
      return 1;
    }
  }

  @Command(name = "create", mixinStandardHelpOptions = true, description = "Register a catalog (tenant).")
  static final class Create extends Base {
    @Parameters(index = "0", paramLabel = "ID", description = "Catalog id: ^[a-z][a-z0-9_-]{0,62}$")
    String id;

    @Option(names = "--type", required = true, description = "rest, sql or embedded")
    String type;

    @Option(names = "--uri", description = "rest: catalog URL; sql: JDBC URL")
    String uri;

    @Option(names = "--warehouse", description = "Warehouse location or name")
    String warehouse;

    @Option(names = "--property", paramLabel = "KEY=VALUE", description = "Catalog property (repeatable)")
    Map<String, String> properties = new LinkedHashMap<>();

    @Override
    public Integer call() {
      ObjectNode body = Json.object();
      body.put("catalog_id", id);
      ObjectNode config = body.putObject("config");
      config.put("type", type);
      if (uri != null) {
        config.put("uri", uri);
      }
      if (warehouse != null) {
        config.put("warehouse", warehouse);
      }
      if (!properties.isEmpty()) {
        ObjectNode props = config.putObject("properties");
        properties.forEach(props::put);
      }
      return print(api().send("POST", "/catalogs", Json.toString(body)), 201);
    }
  }

  @Command(name = "get", mixinStandardHelpOptions = true, description = "Show a catalog's configuration (secrets redacted).")
  static final class Get extends Base {
    @Parameters(index = "0", paramLabel = "ID")
    String id;

    @Override
    public Integer call() {
      return print(api().send("GET", "/catalogs/" + id, null), 200);
    }
  }

  @Command(name = "delete", mixinStandardHelpOptions = true, description = "Remove a catalog registration (its tables and data stay in its warehouse).")
  static final class Delete extends Base {
    @Parameters(index = "0", paramLabel = "ID")
    String id;

    @Override
    public Integer call() {
      return print(api().send("DELETE", "/catalogs/" + id, null), 204);
    }
  }
}
