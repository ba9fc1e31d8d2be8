package io.storageengine.catalog;

import io.storageengine.common.SeException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;

/**
 * What {@link Tables#create} makes: schema, mode, primary key (entity tables), optional version
 * column, partition spec and sort order (both bound to {@code schema}), and extra table
 * properties. Rules are checked by {@link Tables#create}, which names every violation.
 */
public record TableDefinition(
    Schema schema,
    Mode mode,
    List<String> primaryKey,
    Optional<String> versionColumn,
    PartitionSpec partitionSpec,
    SortOrder sortOrder,
    Map<String, String> properties) {

  /** How writes are applied: appended as rows, or merged by primary key. */
  public enum Mode {
    APPEND, ENTITY;

    /** The value of the {@code se.mode} table property. */
    public String propertyValue() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** {@code append} or {@code entity} (case-insensitive); INVALID_ARGUMENT otherwise. */
    public static Mode parse(String text) {
      if (text != null) {
        for (Mode m : values()) {
          if (m.propertyValue().equalsIgnoreCase(text.trim())) {
            return m;
          }
        }
      }
      throw SeException.invalid("unknown table mode '%s' (expected append or entity)", text);
    }
  }

  public TableDefinition {
    Objects.requireNonNull(schema, "schema");
    Objects.requireNonNull(mode, "mode");
    primaryKey = List.copyOf(primaryKey == null ? List.of() : primaryKey);
    versionColumn = versionColumn == null ? Optional.empty() : versionColumn;
    partitionSpec = partitionSpec == null ? PartitionSpec.unpartitioned() : partitionSpec;
    sortOrder = sortOrder == null ? SortOrder.unsorted() : sortOrder;
    properties = Collections.unmodifiableMap(new LinkedHashMap<>(properties == null ? Map.of() : properties));
  }

  /** A builder over {@code schema}: append mode, unpartitioned, unsorted. */
  public static Builder builder(Schema schema) {
    return new Builder(schema);
  }

  /** A builder over the schema {@link TableSpecParser#parseSchema parsed} from {@code schemaText}. */
  public static Builder builder(String schemaText) {
    return new Builder(TableSpecParser.parseSchema(schemaText));
  }

  /** Fluent construction; the text forms are parsed with {@link TableSpecParser}. */
  public static final class Builder {
    private final Schema schema;
    private Mode mode = Mode.APPEND;
    private final List<String> primaryKey = new ArrayList<>();
    private String versionColumn;
    private PartitionSpec partitionSpec = PartitionSpec.unpartitioned();
    private SortOrder sortOrder = SortOrder.unsorted();
    private final Map<String, String> properties = new LinkedHashMap<>();

    private Builder(Schema schema) {
      this.schema = Objects.requireNonNull(schema, "schema");
    }

    public Builder mode(Mode newMode) {
      this.mode = Objects.requireNonNull(newMode, "mode");
      return this;
    }

    public Builder primaryKey(List<String> columns) {
      primaryKey.clear();
      primaryKey.addAll(columns);
      return this;
    }

    public Builder primaryKey(String... columns) {
      return primaryKey(List.of(columns));
    }

    /** The version column, or null for none. */
    public Builder versionColumn(String column) {
      this.versionColumn = column;
      return this;
    }

    public Builder partitionSpec(PartitionSpec spec) {
      this.partitionSpec = Objects.requireNonNull(spec, "spec");
      return this;
    }

    /** Partitioning such as {@code day(ts), bucket(16, id)}; blank for none. */
    public Builder partitionBy(String text) {
      return partitionSpec(TableSpecParser.parsePartitionSpec(schema, text));
    }

    public Builder sortOrder(SortOrder order) {
      this.sortOrder = Objects.requireNonNull(order, "order");
      return this;
    }

    /** Sort order such as {@code name, ts desc nulls last}; blank for none. */
    public Builder sortBy(String text) {
      return sortOrder(TableSpecParser.parseSortOrder(schema, text));
    }

    public Builder property(String key, String value) {
      properties.put(key, value);
      return this;
    }

    public TableDefinition build() {
      return new TableDefinition(schema, mode, primaryKey, Optional.ofNullable(versionColumn),
          partitionSpec, sortOrder, properties);
    }
  }
}
