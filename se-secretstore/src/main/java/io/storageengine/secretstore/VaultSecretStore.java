package io.storageengine.secretstore;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;

/**
 * Secrets in a HashiCorp Vault (or OpenBao) KV version 2 engine, over Vault's HTTP API with the
 * JDK's HTTP client.
 *
 * <p>Key {@code catalog/x} is the KV path {@code <prefix>catalog/x} under mount {@code <mount>}
 * (default {@code secret}, prefix {@code storage-engine/}): Vault paths allow the key's characters
 * as they are. The value is stored base64-encoded in the secret's field {@code value}.
 *
 * <ul>
 *   <li>{@link #get}: {@code GET /v1/<mount>/data/<path>}; 404 is absent. The version is the KV
 *       version number with its {@code created_time}, so a key deleted and created again (numbers
 *       restart at 1) still gets a version it never had.</li>
 *   <li>{@link #create}: a write with {@code options.cas = 0}, which Vault accepts only when the
 *       path has no version: atomic in Vault.</li>
 *   <li>{@link #put}: a write without check-and-set; a new version each time.</li>
 *   <li>{@link #delete}: {@code DELETE /v1/<mount>/metadata/<path>}: every version and the
 *       metadata go, not just a soft delete of the latest.</li>
 * </ul>
 *
 * <p>Authentication: the token ({@code X-Vault-Token}) and optional namespace
 * ({@code X-Vault-Namespace}). Failures are UNAVAILABLE naming the key and HTTP status; Vault's
 * error texts are not passed on, and the token never appears in a message.
 */
public final class VaultSecretStore implements ExternalSecretStore {
  public static final String DEFAULT_MOUNT = "secret";
  public static final String DEFAULT_PREFIX = "storage-engine/";
  private static final String FIELD = "value";

  private final URI address;
  private final String token;
  private final String namespace;
  private final String mount;
  private final String prefix;
  private final HttpClient http;

  public VaultSecretStore(URI address, String token, String namespace, String mount, String prefix) {
    Objects.requireNonNull(address, "address");
    if (address.getScheme() == null || !(address.getScheme().equals("http") || address.getScheme().equals("https"))
        || address.getHost() == null) {
      throw SeException.invalid("--secret-store.vault.address: expected an http(s) URL, got '%s'", address);
    }
    if (token == null || token.isBlank()) {
      throw SeException.invalid("vault secret store: no token; set --secret-store.vault.token or SE_SECRET_STORE_VAULT_TOKEN");
    }
    String a = address.toString();
    this.address = URI.create(a.endsWith("/") ? a : a + "/");
    this.token = token.strip();
    this.namespace = namespace == null || namespace.isBlank() ? null : namespace.strip();
    this.mount = trimSlashes(mount == null || mount.isBlank() ? DEFAULT_MOUNT : mount);
    this.prefix = prefix == null ? DEFAULT_PREFIX : prefix;
    if (!this.prefix.isEmpty() && !this.prefix.matches("([a-z0-9][a-z0-9_.-]*/)+")) {
      throw SeException.invalid("--secret-store.vault.prefix: expected path segments ending in '/', got '%s'", this.prefix);
    }
    this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  }

  @Override
  public Optional<Secret> get(String key) {
    return read(path(key), key).map(doc -> {
      JsonNode data = doc.path("data").path("data").path(FIELD);
      JsonNode meta = doc.path("data").path("metadata");
      if (!data.isTextual() || !meta.path("version").canConvertToLong()) {
        throw new SeException(ErrorCode.INTERNAL, "vault secret store: secret '" + key + "' is unreadable");
      }
      byte[] value;
      try {
        value = Base64.getDecoder().decode(data.asText());
      } catch (IllegalArgumentException e) {
        throw new SeException(ErrorCode.INTERNAL, "vault secret store: secret '" + key + "' is unreadable");
      }
      return new Secret(value, meta.path("version").asLong() + "@" + meta.path("created_time").asText());
    });
  }

  @Override
  public boolean create(String key, byte[] value) {
    HttpResponse<byte[]> r = write(path(key), key, value, true);
    if (r.statusCode() == 200 || r.statusCode() == 204) {
      return true;
    }
    if (r.statusCode() == 400 && new String(r.body(), UTF_8).contains("check-and-set")) {
      return false;
    }
    throw failed("create", key, r.statusCode());
  }

  @Override
  public void put(String key, byte[] value) {
    HttpResponse<byte[]> r = write(path(key), key, value, false);
    if (r.statusCode() != 200 && r.statusCode() != 204) {
      throw failed("write", key, r.statusCode());
    }
  }

  @Override
  public void delete(String key) {
    HttpResponse<byte[]> r = send(request("v1/" + mount + "/metadata/" + path(key)).DELETE(), "delete", key);
    if (r.statusCode() != 204 && r.statusCode() != 200 && r.statusCode() != 404) {
      throw failed("delete", key, r.statusCode());
    }
  }

  /** {@code name} is {@code <path>} or {@code <path>#<field>} under the mount; the field defaults to {@code value}. */
  @Override
  public Optional<byte[]> readReference(String name) {
    int hash = name.indexOf('#');
    String path = trimSlashes(hash < 0 ? name : name.substring(0, hash));
    String field = hash < 0 ? FIELD : name.substring(hash + 1);
    return read(path, name).map(doc -> {
      JsonNode v = doc.path("data").path("data").path(field);
      if (v.isMissingNode() || v.isNull()) {
        throw SeException.invalid("vault secret '%s' has no field '%s'", path, field);
      }
      return (v.isTextual() ? v.asText() : v.toString()).getBytes(UTF_8);
    });
  }

  @Override
  public String describe() {
    return "vault:" + address + mount + "/" + prefix;
  }

  private Optional<JsonNode> read(String path, String what) {
    HttpResponse<byte[]> r = send(request("v1/" + mount + "/data/" + path).GET(), "read", what);
    if (r.statusCode() == 404) {
      return Optional.empty();
    }
    if (r.statusCode() != 200) {
      throw failed("read", what, r.statusCode());
    }
    try {
      return Optional.of(Json.parse(r.body()));
    } catch (SeException e) {
      throw new SeException(ErrorCode.UNAVAILABLE, "vault secret store: cannot read secret '" + what
          + "' (the answer is not JSON)");
    }
  }

  private HttpResponse<byte[]> write(String path, String key, byte[] value, boolean createOnly) {
    Objects.requireNonNull(value, "value");
    ObjectNode body = Json.object();
    if (createOnly) {
      body.putObject("options").put("cas", 0);
    }
    body.putObject("data").put(FIELD, Base64.getEncoder().encodeToString(value));
    return send(request("v1/" + mount + "/data/" + path)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofByteArray(Json.toBytes(body))), createOnly ? "create" : "write", key);
  }

  private HttpRequest.Builder request(String relative) {
    HttpRequest.Builder b = HttpRequest.newBuilder(address.resolve(relative))
        .timeout(Duration.ofSeconds(30))
        .header("X-Vault-Token", token)
        .header("X-Vault-Request", "true");
    if (namespace != null) {
      b.header("X-Vault-Namespace", namespace);
    }
    return b;
  }

  private HttpResponse<byte[]> send(HttpRequest.Builder request, String action, String what) {
    try {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    } catch (IOException e) {
      throw new SeException(ErrorCode.UNAVAILABLE, "vault secret store: cannot " + action + " secret '" + what
          + "' (" + e.getClass().getSimpleName() + ")");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SeException(ErrorCode.UNAVAILABLE, "vault secret store: interrupted while trying to " + action
          + " secret '" + what + "'");
    }
  }

  private String path(String key) {
    return prefix + SecretKeys.check(key);
  }

  private static SeException failed(String action, String key, int status) {
    String hint = status == 403 ? ": permission denied, check the token and its policy" : "";
    return new SeException(ErrorCode.UNAVAILABLE, "vault secret store: cannot " + action + " secret '" + key
        + "' (HTTP " + status + hint + ")");
  }

  private static String trimSlashes(String s) {
    String t = s.strip();
    while (t.startsWith("/")) {
      t = t.substring(1);
    }
    while (t.endsWith("/")) {
      t = t.substring(0, t.length() - 1);
    }
    return t;
  }
}
