package io.storageengine.kafka.connect;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * What the connector knows of a target table: its columns as the engine's ingestion takes them
 * (Arrow types, nullability), its primary key (empty for an append table) and, for entity tables,
 * the version column the connector fills or reads.
 */
public record EngineTable(EngineSinkConfig.TableName name, Map<String, Field> columns, List<String> primaryKey,
    Optional<String> versionColumn) {

  public EngineTable {
    columns = new LinkedHashMap<>(columns);
    primaryKey = List.copyOf(primaryKey);
  }

  /** A table from the Arrow schema the engine reports (Flight SQL column metadata dropped). */
  static EngineTable of(EngineSinkConfig.TableName name, Schema schema, List<String> primaryKey,
      Optional<String> versionColumn) {
    Map<String, Field> columns = new LinkedHashMap<>();
    for (Field field : schema.getFields()) {
      columns.put(field.getName(), withoutMetadata(field));
    }
    if (!primaryKey.isEmpty() && versionColumn.isPresent() && !columns.containsKey(versionColumn.get())) {
      throw new IllegalArgumentException("table " + name + " has no column " + versionColumn.get()
          + " (" + EngineSinkConfig.VERSION_COLUMN + ")");
    }
    return new EngineTable(name, columns, primaryKey, primaryKey.isEmpty() ? Optional.empty() : versionColumn);
  }

  /** An entity table (rows merged by primary key); otherwise an append table. */
  public boolean entity() {
    return !primaryKey.isEmpty();
  }

  private static Field withoutMetadata(Field field) {
    FieldType type = new FieldType(field.isNullable(), field.getType(), field.getDictionary(), null);
    return new Field(field.getName(), type, field.getChildren().stream().map(EngineTable::withoutMetadata).toList());
  }
}
