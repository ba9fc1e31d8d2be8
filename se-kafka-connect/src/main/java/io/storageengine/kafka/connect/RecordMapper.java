package io.storageengine.kafka.connect;

import io.storageengine.wal.WalOperation;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.sink.SinkRecord;

/**
 * Maps a Kafka record to a row of its table.
 *
 * <ul>
 *   <li>The value is a Connect {@link Struct} or a schemaless map (JSON without schemas); each of
 *   its fields must be a column of the table. The row carries exactly the columns the value
 *   names (on an entity table, columns it leaves out keep their stored value: a partial upsert).
 *   <li>Entity tables: the record key is the primary key: a primitive key for a one-column key,
 *   or a struct / map whose fields are the key columns. The key's values replace what the value
 *   says for those columns. The version column is filled from the Kafka offset or timestamp when
 *   {@code se.version.source} says so, else the value carries it.
 *   <li>A tombstone (null value) is a delete of its key on an entity table and is skipped on an
 *   append table (there is nothing to append).
 * </ul>
 */
final class RecordMapper {
  private final EngineTable table;
  private final EngineSinkConfig.VersionSource versionSource;

  RecordMapper(EngineTable table, EngineSinkConfig.VersionSource versionSource) {
    this.table = table;
    this.versionSource = versionSource;
  }

  /** One row: its operation and its column values in table order (see {@link ValueConverter}). */
  record Row(WalOperation operation, List<String> columns, List<Object> values) {
  }

  /** The row of {@code record}, or null for a record that writes nothing (a tombstone on an append table). */
  Row map(SinkRecord record) {
    Map<String, Object> values = new LinkedHashMap<>();
    Object value = record.value();
    WalOperation operation = WalOperation.UPSERT;
    if (value == null) {
      if (!table.entity()) {
        return null;
      }
      operation = WalOperation.DELETE;
      if (versionSource == EngineSinkConfig.VersionSource.FIELD && table.versionColumn().isPresent()) {
        throw new InvalidRecordException("a tombstone carries no version field `" + table.versionColumn().get()
            + "`: take the version from the Kafka offset or timestamp (se.version.source)");
      }
    } else if (value instanceof Struct struct) {
      for (org.apache.kafka.connect.data.Field field : struct.schema().fields()) {
        values.put(field.name(), convert(struct.get(field), field.name()));
      }
    } else if (value instanceof Map<?, ?> map) {
      for (Map.Entry<?, ?> entry : map.entrySet()) {
        if (!(entry.getKey() instanceof String name)) {
          throw new InvalidRecordException("a value map's keys must be strings, got " + entry.getKey());
        }
        values.put(name, convert(entry.getValue(), name));
      }
    } else {
      throw new InvalidRecordException("the value is a " + value.getClass().getSimpleName()
          + ", expected a Connect struct or a JSON object");
    }
    if (table.entity()) {
      putKey(record.key(), values);
      table.versionColumn().ifPresent(column -> {
        if (versionSource == EngineSinkConfig.VersionSource.OFFSET) {
          values.put(column, convert(record.kafkaOffset(), column));
        } else if (versionSource == EngineSinkConfig.VersionSource.TIMESTAMP) {
          if (record.timestamp() == null) {
            throw new InvalidRecordException("the record has no timestamp for the version column `" + column + "`");
          }
          values.put(column, convert(timestampValue(record.timestamp(), table.columns().get(column)), column));
        }
      });
    }
    List<String> columns = new ArrayList<>(values.size());
    List<Object> ordered = new ArrayList<>(values.size());
    for (String column : table.columns().keySet()) {
      if (values.containsKey(column)) {
        columns.add(column);
        ordered.add(values.get(column));
      }
    }
    return new Row(operation, List.copyOf(columns), ordered);
  }

  private void putKey(Object key, Map<String, Object> values) {
    List<String> keyColumns = table.primaryKey();
    if (key == null) {
      throw new InvalidRecordException("the record has no key; table " + table.name() + " is keyed by " + keyColumns);
    }
    if (key instanceof Struct struct) {
      for (String column : keyColumns) {
        if (struct.schema().field(column) == null) {
          throw new InvalidRecordException("key field `" + column + "` is missing from the record key");
        }
        values.put(column, convert(struct.get(column), column));
      }
    } else if (key instanceof Map<?, ?> map) {
      for (String column : keyColumns) {
        if (!map.containsKey(column)) {
          throw new InvalidRecordException("key field `" + column + "` is missing from the record key");
        }
        values.put(column, convert(map.get(column), column));
      }
    } else if (keyColumns.size() == 1) {
      values.put(keyColumns.get(0), convert(key, keyColumns.get(0)));
    } else {
      throw new InvalidRecordException("table " + table.name() + " has the key columns " + keyColumns
          + ": the record key must be a struct or map with those fields");
    }
  }

  private Object convert(Object value, String column) {
    Field field = table.columns().get(column);
    if (field == null) {
      throw new InvalidRecordException("field `" + column + "` is not a column of table " + table.name());
    }
    return ValueConverter.convert(value, field, column);
  }

  /** The record timestamp as a value for a numeric or timestamp version column. */
  private static Object timestampValue(long millis, Field column) {
    return column.getType().getTypeID() == org.apache.arrow.vector.types.pojo.ArrowType.ArrowTypeID.Timestamp
        ? new java.util.Date(millis) : (Object) millis;
  }
}
