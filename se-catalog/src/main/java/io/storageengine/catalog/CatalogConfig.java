package io.storageengine.catalog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Ids;
import io.storageengine.common.Json;
import io.storageengine.common.Redaction;
import io.storageengine.common.SeException;
import io.storageengine.secretstore.SecretReference;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * How to reach one tenant's Iceberg catalog: the {@code config} object of
 * {@code POST /catalogs}, and the document stored in the secret store.
 *
 * <ul>
 *   <li>{@code rest}: {@code uri} (http or https) of an Iceberg REST catalog, optional
 *       {@code warehouse}; {@code properties} go to Iceberg's {@code RESTCatalog}.</li>
 *   <li>{@code sql}: {@code uri} ({@code jdbc:sqlite:...} or {@code jdbc:postgresql:...}) and
 *       {@code warehouse} of an Iceberg {@code JdbcCatalog}; {@code jdbc.*} properties reach the
 *       driver (e.g. {@code jdbc.user}, {@code jdbc.password}).</li>
 *   <li>{@code embedded}: a SQLite catalog on cluster storage; no {@code uri} or {@code warehouse}.</li>
 * </ul>
 *
 * <p>Any property value may be a reference to a secret kept in an external store instead of the
 * secret itself: {@code secret-ref:<store>://<name>} (see {@link SecretReference}), e.g.
 * {@code "credential": "secret-ref:aws-sm://prod/lake-credential"}. Only the reference is stored;
 * {@link CatalogFactory} reads the value when it builds the catalog. A malformed reference is
 * UNPROCESSABLE naming the property.
 *
 * <p>A config that breaks these rules is {@link ErrorCode#UNPROCESSABLE} with a message naming
 * the field. {@link #toString()} is redacted; {@link #toJson()} is not (it is what gets stored).
 */
public record CatalogConfig(Type type, String uri, String warehouse, Map<String, String> properties) {

  /** The kinds of catalog the engine can connect to. */
  public enum Type {
    REST, SQL, EMBEDDED;

    /** The name used in JSON ({@code rest}, {@code sql}, {@code embedded}). */
    public String wireName() {
      return name().toLowerCase(Locale.ROOT);
    }

    static Type fromWireName(String name) {
      for (Type t : values()) {
        if (t.wireName().equals(name)) {
          return t;
        }
      }
      throw unprocessable("config.type: unknown catalog type '%s' (expected rest, sql or embedded)", name);
    }
  }

  /** A parsed {@code POST /catalogs} body. */
  public record Request(String catalogId, CatalogConfig config) {}

  private static final Set<String> REQUEST_FIELDS = Set.of("catalog_id", "config");
  private static final Set<String> CONFIG_FIELDS = Set.of("type", "uri", "warehouse", "properties");

  public CatalogConfig {
    if (type == null) {
      throw unprocessable("missing field 'config.type'");
    }
    properties = properties == null
        ? Map.of()
        : Collections.unmodifiableMap(new LinkedHashMap<>(properties));
    validate(type, uri, warehouse, properties);
  }

  public static CatalogConfig rest(String uri) {
    return new CatalogConfig(Type.REST, uri, null, Map.of());
  }

  public static CatalogConfig sql(String uri, String warehouse) {
    return new CatalogConfig(Type.SQL, uri, warehouse, Map.of());
  }

  public static CatalogConfig embedded() {
    return new CatalogConfig(Type.EMBEDDED, null, null, Map.of());
  }

  public CatalogConfig withWarehouse(String newWarehouse) {
    return new CatalogConfig(type, uri, newWarehouse, properties);
  }

  public CatalogConfig withProperties(Map<String, String> newProperties) {
    return new CatalogConfig(type, uri, warehouse, newProperties);
  }

  /**
   * Parses a {@code POST /catalogs} body {@code {"catalog_id":"...","config":{...}}}.
   * Malformed JSON is INVALID_JSON, a wrong shape UNPROCESSABLE (naming the field), an id not
   * matching {@code ^[a-z][a-z0-9_-]{0,62}$} INVALID_ARGUMENT.
   */
  public static Request parseRequest(byte[] body) {
    JsonNode root = Json.parse(body);
    if (!root.isObject()) {
      throw unprocessable("request body must be a JSON object");
    }
    rejectUnknownFields(root, REQUEST_FIELDS, "");
    String id = requiredString(root, "catalog_id", "catalog_id");
    JsonNode config = root.get("config");
    if (config == null || config.isNull()) {
      throw unprocessable("missing field 'config'");
    }
    CatalogConfig parsed = fromJson(config);
    return new Request(Ids.requireCatalogId(id), parsed);
  }

  /** Parses a config object alone (the stored document, or the {@code config} of a request). */
  public static CatalogConfig parse(byte[] json) {
    return fromJson(Json.parse(json));
  }

  static CatalogConfig fromJson(JsonNode config) {
    if (!config.isObject()) {
      throw unprocessable("field 'config' must be a JSON object");
    }
    rejectUnknownFields(config, CONFIG_FIELDS, "config.");
    Type type = Type.fromWireName(requiredString(config, "type", "config.type"));
    String uri = optionalString(config, "uri", "config.uri");
    String warehouse = optionalString(config, "warehouse", "config.warehouse");
    Map<String, String> properties = new LinkedHashMap<>();
    JsonNode props = config.get("properties");
    if (props != null && !props.isNull()) {
      if (!props.isObject()) {
        throw unprocessable("field 'config.properties' must be an object of strings");
      }
      for (Iterator<Map.Entry<String, JsonNode>> it = props.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        if (!e.getValue().isTextual()) {
          throw unprocessable("field 'config.properties.%s' must be a string", e.getKey());
        }
        properties.put(e.getKey(), e.getValue().asText());
      }
    }
    return new CatalogConfig(type, uri, warehouse, properties);
  }

  /** The full, unredacted config object: what the secret store keeps. */
  public ObjectNode toJson() {
    return toJson(false);
  }

  public byte[] toBytes() {
    return Json.toBytes(toJson());
  }

  /** The API response {@code {"name":"catalogs/<id>","config":{...}}} with secrets redacted. */
  public ObjectNode toResponseJson(String catalogId) {
    ObjectNode out = Json.object();
    out.put("name", "catalogs/" + catalogId);
    out.set("config", toJson(true));
    return out;
  }

  /** The config object with secret-looking property values and URI credentials redacted. */
  public ObjectNode toRedactedJson() {
    return toJson(true);
  }

  @Override
  public String toString() {
    return Json.toString(toJson(true));
  }

  private ObjectNode toJson(boolean redact) {
    ObjectNode out = Json.object();
    out.put("type", type.wireName());
    if (uri != null) {
      out.put("uri", redact ? CatalogRedaction.text(uri) : uri);
    }
    if (warehouse != null) {
      out.put("warehouse", redact ? CatalogRedaction.text(warehouse) : warehouse);
    }
    ObjectNode props = out.putObject("properties");
    (redact ? Redaction.redact(properties) : properties).forEach(props::put);
    return out;
  }

  private static void validate(Type type, String uri, String warehouse, Map<String, String> properties) {
    if (uri != null && uri.isBlank()) {
      throw unprocessable("field 'config.uri' must not be blank");
    }
    if (warehouse != null && warehouse.isBlank()) {
      throw unprocessable("field 'config.warehouse' must not be blank");
    }
    for (Map.Entry<String, String> e : properties.entrySet()) {
      if (e.getKey() == null || e.getKey().isBlank()) {
        throw unprocessable("field 'config.properties' has an empty property name");
      }
      Objects.requireNonNull(e.getValue(), "property value");
      if (SecretReference.isReference(e.getValue())) {
        try {
          SecretReference.parse(e.getValue());
        } catch (SeException x) {
          throw unprocessable("field 'config.properties.%s': %s", e.getKey(), x.getMessage());
        }
      }
      if (e.getKey().equals("uri") || e.getKey().equals("warehouse")) {
        throw unprocessable(
            "field 'config.properties.%s' is not allowed: set 'config.%s' instead", e.getKey(), e.getKey());
      }
    }
    switch (type) {
      case REST -> {
        requireUri(type, uri);
        if (!isHttpUri(uri)) {
          throw unprocessable("field 'config.uri' must be an http or https URL for type rest");
        }
        // The REST client refuses user-info, and Iceberg would log it: ask for properties instead.
        if (URI.create(uri).getRawUserInfo() != null) {
          throw unprocessable("field 'config.uri' must not contain credentials (user:password@); "
              + "use the properties credential or token");
        }
      }
      case SQL -> {
        requireUri(type, uri);
        if (!uri.startsWith("jdbc:")) {
          throw unprocessable("field 'config.uri' must be a JDBC URL (jdbc:...) for type sql");
        }
        if (warehouse == null) {
          throw unprocessable("missing field 'config.warehouse': required for type sql");
        }
      }
      case EMBEDDED -> {
        if (uri != null) {
          throw unprocessable("field 'config.uri' is not allowed for type embedded");
        }
        if (warehouse != null) {
          throw unprocessable("field 'config.warehouse' is not allowed for type embedded");
        }
      }
      default -> throw new IllegalStateException("unhandled type " + type);
    }
  }

  private static void requireUri(Type type, String uri) {
    if (uri == null) {
      throw unprocessable("missing field 'config.uri': required for type %s", type.wireName());
    }
  }

  private static boolean isHttpUri(String uri) {
    try {
      URI parsed = new URI(uri);
      String scheme = parsed.getScheme();
      return scheme != null
          && (scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))
          && parsed.getHost() != null;
    } catch (URISyntaxException e) {
      return false;
    }
  }

  private static void rejectUnknownFields(JsonNode node, Set<String> allowed, String prefix) {
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (!allowed.contains(name)) {
        throw unprocessable("unknown field '%s%s'", prefix, name);
      }
    }
  }

  private static String requiredString(JsonNode node, String field, String path) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      throw unprocessable("missing field '%s'", path);
    }
    if (!value.isTextual()) {
      throw unprocessable("field '%s' must be a string", path);
    }
    return value.asText();
  }

  private static String optionalString(JsonNode node, String field, String path) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      return null;
    }
    if (!value.isTextual()) {
      throw unprocessable("field '%s' must be a string", path);
    }
    return value.asText();
  }

  private static SeException unprocessable(String fmt, Object... args) {
    return new SeException(ErrorCode.UNPROCESSABLE, String.format(fmt, args));
  }
}
