package io.storageengine.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.Json;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code se principal ...} and {@code se grant ...}: the admin API of authentication (cluster
 * admins only; {@code --token} / {@code SE_TOKEN} names the caller). Answers print as JSON.
 */
final class AccessCommands {
  private AccessCommands() {}

  private static String segment(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
  }

  @Command(name = "principal", mixinStandardHelpOptions = true,
      description = "Manage API-token principals (--auth.mode tokens; admins only).",
      subcommands = {Principal.Create.class, Principal.Delete.class, Principal.Token.class, Principal.Revoke.class})
  static final class Principal {
    @Command(name = "create", mixinStandardHelpOptions = true, description = "Create a principal.")
    static final class Create extends CatalogCommand.Base {
      @Parameters(index = "0", paramLabel = "NAME", description = "Principal name: ^[a-z0-9][a-z0-9_.-]{0,63}$")
      String name;

      @Override
      public Integer call() {
        return print(api().send("POST", "/principals", Json.toString(Json.object().put("name", name))), 201);
      }
    }

    @Command(name = "delete", mixinStandardHelpOptions = true, description = "Delete a principal; its tokens stop working.")
    static final class Delete extends CatalogCommand.Base {
      @Parameters(index = "0", paramLabel = "NAME")
      String name;

      @Override
      public Integer call() {
        return print(api().send("DELETE", "/principals/" + segment(name), null), 204);
      }
    }

    @Command(name = "token", mixinStandardHelpOptions = true,
        description = "Issue a token for a principal; prints {\"id\",\"token\",...}: the token is shown this once.")
    static final class Token extends CatalogCommand.Base {
      @Parameters(index = "0", paramLabel = "NAME")
      String name;

      @Option(names = "--expires-in", defaultValue = "P30D", paramLabel = "DURATION",
          description = "ISO-8601 duration until the token expires (default ${DEFAULT-VALUE}).")
      String expiresIn;

      @Override
      public Integer call() {
        ObjectNode body = Json.object().put("expires_in", expiresIn);
        return print(api().send("POST", "/principals/" + segment(name) + "/tokens", Json.toString(body)), 201);
      }
    }

    @Command(name = "revoke", mixinStandardHelpOptions = true, description = "Revoke one token of a principal by its id.")
    static final class Revoke extends CatalogCommand.Base {
      @Parameters(index = "0", paramLabel = "NAME")
      String name;

      @Parameters(index = "1", paramLabel = "TOKEN_ID", description = "The id `se principal token` printed.")
      String id;

      @Override
      public Integer call() {
        return print(api().send("DELETE", "/principals/" + segment(name) + "/tokens/" + segment(id), null), 204);
      }
    }
  }

  @Command(name = "grant", mixinStandardHelpOptions = true,
      description = "Manage per-catalog grants (admins only). A grantee is a principal name or group:<name>.",
      subcommands = {Grant.Set.class, Grant.List.class, Grant.Revoke.class})
  static final class Grant {
    @Command(name = "set", mixinStandardHelpOptions = true, description = "Give a grantee a role on a catalog.")
    static final class Set extends CatalogCommand.Base {
      @Option(names = "--catalog-id", required = true, description = "Tenant catalog id.")
      String catalogId;

      @Parameters(index = "0", paramLabel = "GRANTEE")
      String grantee;

      @Parameters(index = "1", paramLabel = "ROLE", description = "reader, writer or owner")
      String role;

      @Override
      public Integer call() {
        ObjectNode body = Json.object().put("role", role);
        return print(api().send("PUT", "/catalogs/" + segment(catalogId) + "/grants/" + segment(grantee),
            Json.toString(body)), 204);
      }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List the grants on a catalog.")
    static final class List extends CatalogCommand.Base {
      @Option(names = "--catalog-id", required = true, description = "Tenant catalog id.")
      String catalogId;

      @Override
      public Integer call() {
        return print(api().send("GET", "/catalogs/" + segment(catalogId) + "/grants", null), 200);
      }
    }

    @Command(name = "revoke", mixinStandardHelpOptions = true, description = "Remove a grantee's grant on a catalog.")
    static final class Revoke extends CatalogCommand.Base {
      @Option(names = "--catalog-id", required = true, description = "Tenant catalog id.")
      String catalogId;

      @Parameters(index = "0", paramLabel = "GRANTEE")
      String grantee;

      @Override
      public Integer call() {
        return print(api().send("DELETE", "/catalogs/" + segment(catalogId) + "/grants/" + segment(grantee), null),
            204);
      }
    }
  }
}
