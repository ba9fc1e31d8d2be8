package io.storageengine.secretstore;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import io.storageengine.common.Json;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Secrets Manager's JSON 1.1 protocol for the four operations the store calls: CreateSecret,
 * GetSecretValue, PutSecretValue, DeleteSecret (X-Amz-Target header, JSON bodies, errors as
 * {@code {"__type": ..., "message": ...}} with status 400).
 */
final class FakeAwsSecretsManager extends FakeHttpServer {
  private record Stored(String versionId, String binary, String string) {}

  private final Map<String, Stored> secrets = new TreeMap<>();
  final List<String> targets = new ArrayList<>();

  FakeAwsSecretsManager() throws IOException {}

  /** Puts a secret as an operator would (SecretString), outside the store. */
  synchronized void putString(String name, String value) {
    secrets.put(name, new Stored(UUID.randomUUID().toString(), null, value));
  }

  synchronized Map<String, String> rawBinaries() {
    Map<String, String> out = new TreeMap<>();
    secrets.forEach((k, v) -> out.put(k, v.binary()));
    return out;
  }

  @Override
  void handle(HttpExchange ex) throws IOException {
    String target = ex.getRequestHeaders().getFirst("X-Amz-Target");
    String auth = ex.getRequestHeaders().getFirst("Authorization");
    if (auth == null || !auth.startsWith("AWS4-HMAC-SHA256")) {
      error(ex, "UnrecognizedClientException", "missing signature");
      return;
    }
    JsonNode req = Json.parse(ex.getRequestBody().readAllBytes());
    String op = target == null ? "" : target.substring(target.indexOf('.') + 1);
    synchronized (this) {
      targets.add(op);
      switch (op) {
        case "CreateSecret" -> {
          String name = req.path("Name").asText();
          if (secrets.containsKey(name)) {
            error(ex, "ResourceExistsException", "The operation failed because the secret " + name + " already exists.");
            return;
          }
          Stored s = stored(req);
          secrets.put(name, s);
          ok(ex, Json.object().put("ARN", arn(name)).put("Name", name).put("VersionId", s.versionId()));
        }
        case "GetSecretValue" -> {
          String name = req.path("SecretId").asText();
          Stored s = secrets.get(name);
          if (s == null) {
            error(ex, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.");
            return;
          }
          ObjectNode out = Json.object().put("ARN", arn(name)).put("Name", name).put("VersionId", s.versionId())
              .put("CreatedDate", System.currentTimeMillis() / 1000.0);
          out.putArray("VersionStages").add("AWSCURRENT");
          if (s.binary() != null) {
            out.put("SecretBinary", s.binary());
          } else {
            out.put("SecretString", s.string());
          }
          ok(ex, out);
        }
        case "PutSecretValue" -> {
          String name = req.path("SecretId").asText();
          if (!secrets.containsKey(name)) {
            error(ex, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.");
            return;
          }
          Stored s = stored(req);
          secrets.put(name, s);
          ok(ex, Json.object().put("ARN", arn(name)).put("Name", name).put("VersionId", s.versionId()));
        }
        case "DeleteSecret" -> {
          String name = req.path("SecretId").asText();
          if (secrets.remove(name) == null) {
            error(ex, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.");
            return;
          }
          ok(ex, Json.object().put("ARN", arn(name)).put("Name", name).put("DeletionDate", System.currentTimeMillis() / 1000.0));
        }
        default -> error(ex, "InvalidAction", "unknown target " + target);
      }
    }
  }

  private static Stored stored(JsonNode req) {
    String token = req.path("ClientRequestToken").asText(UUID.randomUUID().toString());
    return new Stored(token, req.hasNonNull("SecretBinary") ? req.get("SecretBinary").asText() : null,
        req.hasNonNull("SecretString") ? req.get("SecretString").asText() : null);
  }

  private static String arn(String name) {
    return "arn:aws:secretsmanager:us-east-1:123456789012:secret:" + name + "-AbCdEf";
  }

  private static void ok(HttpExchange ex, ObjectNode body) throws IOException {
    respond(ex, 200, Json.toString(body), "application/x-amz-json-1.1");
  }

  private static void error(HttpExchange ex, String type, String message) throws IOException {
    ex.getResponseHeaders().set("x-amzn-ErrorType", type);
    respond(ex, 400, Json.toString(Json.object().put("__type", type).put("message", message)),
        "application/x-amz-json-1.1");
  }
}
