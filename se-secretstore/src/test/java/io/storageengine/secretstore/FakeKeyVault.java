package io.storageengine.secretstore;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.storageengine.common.Json;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import javax.net.ssl.SSLContext;

/**
 * Key Vault's secrets REST API over HTTPS, as the SDK uses it: Set Secret ({@code PUT
 * /secrets/<name>}), Get Secret ({@code GET /secrets/<name>[/<version>]}), Delete Secret, Get
 * Deleted Secret and Purge Deleted Secret ({@code /deletedsecrets/<name>}). Like the service it
 * answers a request without a bearer token with 401 and the challenge
 * ({@code WWW-Authenticate: Bearer authorization=..., resource=...}), names are
 * case-insensitive, and a deleted secret holds its name (409 on set) until purged.
 */
final class FakeKeyVault extends FakeHttpServer {
  static final String TOKEN = "kv-test-token";
  static final String DENIED_TOKEN = "kv-denied-token";
  static final String TENANT = "00000000-0000-0000-0000-000000000000";
  static final String CLIENT_ID = "11111111-1111-1111-1111-111111111111";
  static final String CLIENT_SECRET = "kv-client-s3cr3t";
  private int tokensIssued;

  private record Version(String id, String value, String contentType, long created) {}

  private final Map<String, List<Version>> secrets = new HashMap<>();
  private final Map<String, List<Version>> deleted = new HashMap<>();
  final List<String> requests = new ArrayList<>();

  FakeKeyVault(SSLContext tls) throws IOException {
    super(https(tls));
  }

  private static HttpsServer https(SSLContext tls) throws IOException {
    HttpsServer server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    server.setHttpsConfigurator(new HttpsConfigurator(tls));
    return server;
  }

  /** Sets a text secret as an operator would, outside the store. */
  synchronized void putText(String name, String value) {
    secrets.computeIfAbsent(name.toLowerCase(Locale.ROOT), k -> new ArrayList<>())
        .add(new Version(UUID.randomUUID().toString().replace("-", ""), value, null, System.currentTimeMillis() / 1000));
  }

  synchronized Map<String, String> rawValues() {
    Map<String, String> out = new HashMap<>();
    secrets.forEach((k, v) -> out.put(k, v.get(v.size() - 1).value()));
    return out;
  }

  /** Deletes {@code name} without purging it, as a delete whose purge failed leaves it. */
  synchronized void softDelete(String name) {
    String key = name.toLowerCase(Locale.ROOT);
    deleted.put(key, secrets.remove(key));
  }

  synchronized boolean isDeleted(String name) {
    return deleted.containsKey(name.toLowerCase(Locale.ROOT));
  }

  synchronized int tokensIssued() {
    return tokensIssued;
  }

  @Override
  void handle(HttpExchange ex) throws IOException {
    if (ex.getRequestURI().getPath().startsWith("/" + TENANT + "/")) {
      signIn(ex);
      return;
    }
    String auth = ex.getRequestHeaders().getFirst("Authorization");
    if (auth == null || !(auth.equals("Bearer " + TOKEN) || auth.equals("Bearer " + DENIED_TOKEN))) {
      ex.getRequestBody().readAllBytes();
      ex.getResponseHeaders().set("WWW-Authenticate",
          "Bearer authorization=\"https://login.microsoftonline.com/" + TENANT + "\", "
              + "resource=\"https://vault.azure.net\"");
      error(ex, 401, "Unauthorized", "AKV10000: Request is missing a Bearer or PoP token.");
      return;
    }
    if (auth.equals("Bearer " + DENIED_TOKEN)) {
      ex.getRequestBody().readAllBytes();
      error(ex, 403, "Forbidden", "The user, group or application does not have secrets permission.");
      return;
    }
    if (ex.getRequestURI().getQuery() == null || !ex.getRequestURI().getQuery().contains("api-version=")) {
      error(ex, 400, "BadParameter", "The request URI contains an invalid api-version.");
      return;
    }
    String[] path = ex.getRequestURI().getPath().replaceAll("/+$", "").split("/");
    String method = ex.getRequestMethod();
    synchronized (this) {
      requests.add(method + " /" + (path.length > 1 ? path[1] : ""));
      if (path.length >= 3 && path[1].equals("secrets")) {
        String name = path[2].toLowerCase(Locale.ROOT);
        if (method.equals("PUT") && path.length == 3) {
          if (deleted.containsKey(name)) {
            error(ex, 409, "Conflict", "Secret " + path[2] + " is currently in a deleted but recoverable state.");
            return;
          }
          JsonNode req = Json.parse(ex.getRequestBody().readAllBytes());
          Version v = new Version(UUID.randomUUID().toString().replace("-", ""), req.path("value").asText(),
              req.path("contentType").isTextual() ? req.path("contentType").asText() : null,
              System.currentTimeMillis() / 1000);
          secrets.computeIfAbsent(name, k -> new ArrayList<>()).add(v);
          respond(ex, 200, Json.toString(bundle(ex, path[2], v)), "application/json");
        } else if (method.equals("GET") && path.length <= 4) {
          List<Version> versions = secrets.get(name);
          Version v = versions == null ? null : path.length == 4
              ? versions.stream().filter(x -> x.id().equals(path[3])).findFirst().orElse(null)
              : versions.get(versions.size() - 1);
          if (v == null) {
            error(ex, 404, "SecretNotFound", "A secret with (name/id) " + path[2] + " was not found in this key vault.");
            return;
          }
          respond(ex, 200, Json.toString(bundle(ex, path[2], v)), "application/json");
        } else if (method.equals("DELETE") && path.length == 3) {
          List<Version> versions = secrets.remove(name);
          if (versions == null) {
            error(ex, 404, "SecretNotFound", "A secret with (name/id) " + path[2] + " was not found in this key vault.");
            return;
          }
          deleted.put(name, versions);
          respond(ex, 200, Json.toString(deletedBundle(ex, path[2], versions)), "application/json");
        } else {
          error(ex, 405, "BadRequest", "method not allowed");
        }
      } else if (path.length == 3 && path[1].equals("deletedsecrets")) {
        String name = path[2].toLowerCase(Locale.ROOT);
        List<Version> versions = deleted.get(name);
        if (versions == null) {
          error(ex, 404, "SecretNotFound", "Deleted Secret not found");
        } else if (method.equals("GET")) {
          respond(ex, 200, Json.toString(deletedBundle(ex, path[2], versions)), "application/json");
        } else if (method.equals("DELETE")) {
          deleted.remove(name);
          respond(ex, 204, null, null);
        } else {
          error(ex, 405, "BadRequest", "method not allowed");
        }
      } else {
        error(ex, 404, "NotFound", "no such route");
      }
    }
  }

  /**
   * Entra ID's sign-in for the tenant: OpenID metadata, and the token endpoint's client-credentials
   * grant ({@code client_id}, {@code client_secret}, {@code scope} form fields).
   */
  private void signIn(HttpExchange ex) throws IOException {
    String path = ex.getRequestURI().getPath();
    String base = uri() + "/" + TENANT;
    if (path.endsWith("/.well-known/openid-configuration")) {
      ObjectNode meta = Json.object().put("issuer", base + "/v2.0").put("token_endpoint", base + "/oauth2/v2.0/token")
          .put("authorization_endpoint", base + "/oauth2/v2.0/authorize");
      respond(ex, 200, Json.toString(meta), "application/json");
      return;
    }
    if (!path.endsWith("/oauth2/v2.0/token") || !ex.getRequestMethod().equals("POST")) {
      respond(ex, 404, "{\"error\":\"not_found\"}", "application/json");
      return;
    }
    Map<String, String> form = new HashMap<>();
    for (String pair : new String(ex.getRequestBody().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).split("&")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        form.put(java.net.URLDecoder.decode(pair.substring(0, eq), java.nio.charset.StandardCharsets.UTF_8),
            java.net.URLDecoder.decode(pair.substring(eq + 1), java.nio.charset.StandardCharsets.UTF_8));
      }
    }
    if (!"client_credentials".equals(form.get("grant_type")) || !CLIENT_ID.equals(form.get("client_id"))
        || !CLIENT_SECRET.equals(form.get("client_secret"))) {
      respond(ex, 401, "{\"error\":\"invalid_client\",\"error_description\":\"AADSTS7000215: Invalid client secret provided.\"}",
          "application/json");
      return;
    }
    if (form.get("scope") == null || !form.get("scope").contains("https://vault.azure.net/.default")) {
      respond(ex, 400, "{\"error\":\"invalid_scope\"}", "application/json");
      return;
    }
    synchronized (this) {
      tokensIssued++;
    }
    respond(ex, 200, Json.toString(Json.object().put("token_type", "Bearer").put("expires_in", 3599)
        .put("ext_expires_in", 3599).put("access_token", TOKEN)), "application/json");
  }

  private ObjectNode bundle(HttpExchange ex, String name, Version v) {
    ObjectNode out = Json.object();
    out.put("value", v.value());
    out.put("id", uri() + "/secrets/" + name + "/" + v.id());
    if (v.contentType() != null) {
      out.put("contentType", v.contentType());
    }
    out.putObject("attributes").put("enabled", true).put("created", v.created()).put("updated", v.created())
        .put("recoveryLevel", "Recoverable+Purgeable").put("recoverableDays", 90);
    return out;
  }

  private ObjectNode deletedBundle(HttpExchange ex, String name, List<Version> versions) {
    Version v = versions.get(versions.size() - 1);
    ObjectNode out = Json.object();
    out.put("recoveryId", uri() + "/deletedsecrets/" + name);
    long now = System.currentTimeMillis() / 1000;
    out.put("deletedDate", now).put("scheduledPurgeDate", now + 90 * 86400);
    out.put("id", uri() + "/secrets/" + name + "/" + v.id());
    out.putObject("attributes").put("enabled", true).put("created", v.created()).put("updated", v.created())
        .put("recoveryLevel", "Recoverable+Purgeable").put("recoverableDays", 90);
    return out;
  }

  private static void error(HttpExchange ex, int status, String code, String message) throws IOException {
    ObjectNode body = Json.object();
    body.putObject("error").put("code", code).put("message", message);
    respond(ex, status, Json.toString(body), "application/json; charset=utf-8");
  }
}
