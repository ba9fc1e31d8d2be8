package io.storageengine.secretstore;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import io.storageengine.common.Json;
import java.io.IOException;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * Vault's KV v2 HTTP API under mount {@code secret}: read and write {@code /v1/secret/data/<path>}
 * (with {@code options.cas}), delete {@code /v1/secret/metadata/<path>}, token in X-Vault-Token.
 */
final class FakeVault extends FakeHttpServer {
  static final String TOKEN = "hvs.test-token";

  private record Version(int number, ObjectNode data, String createdTime) {}

  private final Map<String, Version> latest = new HashMap<>();
  private final Map<String, Integer> counters = new HashMap<>();

  FakeVault() throws IOException {}

  synchronized void putRaw(String path, ObjectNode data) {
    int n = counters.merge(path, 1, Integer::sum);
    latest.put(path, new Version(n, data, Instant.now().toString()));
  }

  synchronized Map<String, ObjectNode> raw() {
    Map<String, ObjectNode> out = new HashMap<>();
    latest.forEach((k, v) -> out.put(k, v.data()));
    return out;
  }

  @Override
  void handle(HttpExchange ex) throws IOException {
    if (!TOKEN.equals(ex.getRequestHeaders().getFirst("X-Vault-Token"))) {
      respond(ex, 403, "{\"errors\":[\"permission denied\"]}", "application/json");
      return;
    }
    String path = ex.getRequestURI().getPath();
    String method = ex.getRequestMethod();
    synchronized (this) {
      if (path.startsWith("/v1/secret/data/")) {
        String p = path.substring("/v1/secret/data/".length());
        if (method.equals("GET")) {
          Version v = latest.get(p);
          if (v == null) {
            respond(ex, 404, "{\"errors\":[]}", "application/json");
            return;
          }
          ObjectNode out = Json.object();
          ObjectNode data = out.putObject("data");
          data.set("data", v.data());
          data.putObject("metadata").put("version", v.number()).put("created_time", v.createdTime())
              .put("deletion_time", "").put("destroyed", false);
          respond(ex, 200, Json.toString(out), "application/json");
        } else if (method.equals("POST") || method.equals("PUT")) {
          JsonNode req = Json.parse(ex.getRequestBody().readAllBytes());
          JsonNode cas = req.path("options").path("cas");
          Version current = latest.get(p);
          if (!cas.isMissingNode() && cas.asInt() != (current == null ? 0 : current.number())) {
            respond(ex, 400, "{\"errors\":[\"check-and-set parameter did not match the current version\"]}",
                "application/json");
            return;
          }
          int n = counters.merge(p, 1, Integer::sum);
          // Instant.now() has microseconds at best: add the count so two writes never share a time.
          Version v = new Version(n, (ObjectNode) req.get("data"), Instant.now().toString() + "#" + System.nanoTime());
          latest.put(p, v);
          respond(ex, 200, Json.toString(Json.object().set("data",
              Json.object().put("version", n).put("created_time", v.createdTime()))), "application/json");
        } else {
          respond(ex, 405, null, null);
        }
      } else if (path.startsWith("/v1/secret/metadata/") && method.equals("DELETE")) {
        String p = path.substring("/v1/secret/metadata/".length());
        latest.remove(p);
        counters.remove(p);
        respond(ex, 204, null, null);
      } else {
        respond(ex, 404, "{\"errors\":[]}", "application/json");
      }
    }
  }
}
