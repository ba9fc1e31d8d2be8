package io.storageengine.kafka.connect;

import java.net.URI;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;

/**
 * The connector's settings (Connect's own {@link ConfigDef}, so a worker validates and documents
 * them). Every key starts with {@code se.}; the README's Kafka Connect section lists them.
 */
public final class EngineSinkConfig extends AbstractConfig {
  public static final String ENGINE_URI = "se.engine.uri";
  public static final String CA_BUNDLE = "se.engine.ca-bundle";
  public static final String TOKEN = "se.engine.token";
  public static final String CATALOG = "se.catalog";
  public static final String TABLE = "se.table";
  public static final String TABLES = "se.tables";
  public static final String VERSION_SOURCE = "se.version.source";
  public static final String VERSION_COLUMN = "se.version.column";
  public static final String BATCH_RECORDS = "se.batch.max-records";

  /** Where the version of an entity row comes from. */
  public enum VersionSource {
    /** The record value's field named like the table's version column (or none: newest arrival wins). */
    FIELD,
    /** The record's Kafka offset, written to {@link #VERSION_COLUMN}. */
    OFFSET,
    /** The record's Kafka timestamp (milliseconds), written to {@link #VERSION_COLUMN}. */
    TIMESTAMP
  }

  static final ConfigDef DEFINITION = new ConfigDef()
      .define(ENGINE_URI, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, ConfigDef.Importance.HIGH,
          "The engine's listener: grpc://host:port or grpc+tls://host:port")
      .define(CA_BUNDLE, ConfigDef.Type.STRING, "", ConfigDef.Importance.MEDIUM,
          "grpc+tls only: a PEM file of the CA certificates the server's certificate chains to (empty: the JDK's trust store)")
      .define(TOKEN, ConfigDef.Type.PASSWORD, "", ConfigDef.Importance.HIGH,
          "API or OIDC token sent as 'authorization: Bearer <token>' (empty: none, for --auth.mode none)")
      .define(CATALOG, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, ConfigDef.Importance.HIGH,
          "The tenant catalog id the tables belong to")
      .define(TABLE, ConfigDef.Type.STRING, "", ConfigDef.Importance.HIGH,
          "namespace.table every topic is written to (when se.tables does not name the topic)")
      .define(TABLES, ConfigDef.Type.LIST, "", ConfigDef.Importance.HIGH,
          "topic:namespace.table pairs, comma-separated; a topic named here goes to its table")
      .define(VERSION_SOURCE, ConfigDef.Type.STRING, "field",
          ConfigDef.CaseInsensitiveValidString.in("field", "offset", "timestamp"), ConfigDef.Importance.MEDIUM,
          "Entity tables: where the version comes from: field (the value's field), offset or timestamp (of the Kafka record)")
      .define(VERSION_COLUMN, ConfigDef.Type.STRING, "", ConfigDef.Importance.MEDIUM,
          "Entity tables: the table's version column (se.version-column); required for offset and timestamp")
      .define(BATCH_RECORDS, ConfigDef.Type.INT, 10_000, ConfigDef.Range.between(1, 1_000_000),
          ConfigDef.Importance.LOW, "Most records of one partition in one Arrow batch");

  public EngineSinkConfig(Map<String, String> properties) {
    super(DEFINITION, properties);
    uri(); // fail at start, naming the key
    if (getString(TABLE).isBlank() && getList(TABLES).isEmpty()) {
      throw new ConfigException("set " + TABLE + " or " + TABLES + " (topic:namespace.table)");
    }
    tableMapping();
    if (versionSource() != VersionSource.FIELD && versionColumn().isEmpty()) {
      throw new ConfigException(VERSION_COLUMN, "", "required when " + VERSION_SOURCE + " is "
          + versionSource().name().toLowerCase(Locale.ROOT));
    }
    if (caBundle().isPresent() && !"grpc+tls".equals(uri().getScheme())) {
      throw new ConfigException(CA_BUNDLE, getString(CA_BUNDLE), "a CA bundle needs a grpc+tls " + ENGINE_URI);
    }
  }

  public URI uri() {
    String value = getString(ENGINE_URI);
    URI uri;
    try {
      uri = URI.create(value);
    } catch (IllegalArgumentException e) {
      throw new ConfigException(ENGINE_URI, value, "not a URI");
    }
    if (!List.of("grpc", "grpc+tcp", "grpc+tls").contains(uri.getScheme()) || uri.getHost() == null || uri.getPort() < 0) {
      throw new ConfigException(ENGINE_URI, value, "expected grpc://host:port or grpc+tls://host:port");
    }
    return uri;
  }

  public Optional<Path> caBundle() {
    String value = getString(CA_BUNDLE);
    return value.isBlank() ? Optional.empty() : Optional.of(Path.of(value));
  }

  /** The token, or empty for none. */
  public Optional<String> token() {
    Password password = getPassword(TOKEN);
    return password == null || password.value().isBlank() ? Optional.empty() : Optional.of(password.value());
  }

  public String catalog() {
    return getString(CATALOG);
  }

  /** The table of {@code topic}: its entry in {@link #TABLES}, else {@link #TABLE}. */
  public TableName tableOf(String topic) {
    TableName mapped = tableMapping().get(topic);
    if (mapped != null) {
      return mapped;
    }
    if (getString(TABLE).isBlank()) {
      throw new ConfigException(TABLES, getList(TABLES), "names no table for topic " + topic + " and " + TABLE + " is not set");
    }
    return TableName.parse(TABLE, getString(TABLE));
  }

  public VersionSource versionSource() {
    return VersionSource.valueOf(getString(VERSION_SOURCE).toUpperCase(Locale.ROOT));
  }

  public Optional<String> versionColumn() {
    String value = getString(VERSION_COLUMN).trim();
    return value.isEmpty() ? Optional.empty() : Optional.of(value);
  }

  public int batchRecords() {
    return getInt(BATCH_RECORDS);
  }

  private Map<String, TableName> tableMapping() {
    Map<String, TableName> mapping = new LinkedHashMap<>();
    for (String entry : getList(TABLES)) {
      int colon = entry.indexOf(':');
      if (colon <= 0 || colon == entry.length() - 1) {
        throw new ConfigException(TABLES, entry, "expected topic:namespace.table");
      }
      mapping.put(entry.substring(0, colon).trim(), TableName.parse(TABLES, entry.substring(colon + 1).trim()));
    }
    return mapping;
  }

  /** A table of the catalog: its namespace levels and name. */
  public record TableName(List<String> namespace, String name) {
    static TableName parse(String key, String value) {
      int dot = value.lastIndexOf('.');
      if (dot <= 0 || dot == value.length() - 1) {
        throw new ConfigException(key, value, "expected namespace.table");
      }
      return new TableName(List.of(value.substring(0, dot).split("\\.")), value.substring(dot + 1));
    }

    @Override
    public String toString() {
      return String.join(".", namespace) + "." + name;
    }
  }
}
