package io.storageengine.ingest;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.common.SeException;
import io.storageengine.wal.WalOperation;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryEncoder;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.types.Types;

/**
 * Validates the batches of one stream against its target table (ARCHITECTURE.md 6.3) and
 * converts them to the table's Arrow types with Iceberg field ids in the field metadata.
 *
 * <p>The stream's schema is checked once, when the validator is built: columns are matched to
 * the table's current schema by name; an unknown column, an incompatible type, a missing
 * required column (append tables), a missing primary-key or version column (entity tables) or an
 * extra column in a delete is INVALID_ARGUMENT naming the column. Each batch is then checked for
 * nulls in required, key and version columns and in required nested fields, and converted. A
 * batch that fails produces nothing, so nothing rejected ever reaches the WAL.
 */
final class BatchValidator {
  private final IngestTarget target;
  private final List<Column> columns;
  private final Schema output;
  /** The IPC message of {@link #output}, serialised once for every batch of the stream. */
  private final byte[] outputMessage;

  /** One incoming column and how it becomes the table's column. */
  private record Column(int index, String name, ColumnConverter converter, Long dictionaryId,
      boolean nonNull, String role) {}

  private BatchValidator(IngestTarget target, List<Column> columns, Schema output) {
    this.target = target;
    this.columns = columns;
    this.output = output;
    this.outputMessage = ArrowIpc.schemaMessage(output);
  }

  /** Checks the stream's schema against the target and plans the conversion of its columns. */
  static BatchValidator forStream(IngestTarget target, Schema incoming,
      DictionaryProvider dictionaries) {
    org.apache.iceberg.Schema table = target.schema();
    List<Column> columns = new ArrayList<>();
    List<Field> outputFields = new ArrayList<>();
    Set<String> present = new HashSet<>();
    List<Field> fields = incoming.getFields();
    for (int i = 0; i < fields.size(); i++) {
      Field field = fields.get(i);
      String name = field.getName();
      if (!present.add(name)) {
        throw SeException.invalid("column `%s`: appears twice in the batch schema", name);
      }
      Types.NestedField tableField = table.asStruct().field(name);
      if (tableField == null) {
        throw SeException.invalid("column `%s`: not a column of table `%s`", name,
            target.displayName());
      }
      if (target.operation() == WalOperation.DELETE && !target.isKeyOrVersion(name)) {
        throw SeException.invalid("column `%s`: a delete carries only the primary-key and "
            + "version columns", name);
      }
      Long dictionaryId = null;
      Field source = field;
      DictionaryEncoding encoding = field.getDictionary();
      if (encoding != null) {
        dictionaryId = encoding.getId();
        Dictionary dictionary = dictionaries == null ? null : dictionaries.lookup(dictionaryId);
        if (dictionary == null) {
          throw SeException.invalid("column `%s`: dictionary %d is not defined", name, dictionaryId);
        }
        Field values = dictionary.getVector().getField();
        source = new Field(name, values.getFieldType(), values.getChildren());
      }
      Field targetField = IcebergArrowSchemas.toArrow(tableField);
      ColumnConverter converter =
          ColumnConverter.create(name, source, tableField.type(), targetField);
      String role = target.keyColumns().contains(name) ? "primary-key"
          : name.equals(target.versionColumn()) ? "version" : "required";
      boolean nonNull = tableField.isRequired() || target.isKeyOrVersion(name);
      columns.add(new Column(i, name, converter, dictionaryId, nonNull, role));
      outputFields.add(targetField);
    }
    checkPresence(target, present);
    return new BatchValidator(target, List.copyOf(columns), new Schema(outputFields));
  }

  private static void checkPresence(IngestTarget target, Set<String> present) {
    if (target.entity()) {
      for (String key : target.keyColumns()) {
        if (!present.contains(key)) {
          throw SeException.invalid("column `%s`: primary-key column missing from the batch", key);
        }
      }
      String version = target.versionColumn();
      if (version != null && !present.contains(version)) {
        throw SeException.invalid("column `%s`: version column missing from the batch", version);
      }
      return; // partial upserts may omit any other column
    }
    for (Types.NestedField column : target.schema().columns()) {
      if (column.isRequired() && !present.contains(column.name())) {
        throw SeException.invalid("column `%s`: required column missing from the batch",
            column.name());
      }
    }
  }

  /** The schema of converted batches: table types, field ids, the stream's columns only. */
  Schema outputSchema() {
    return output;
  }

  IngestTarget target() {
    return target;
  }

  /**
   * Validates the batch in {@code root} and returns it as an Arrow IPC stream in the table's
   * types. Temporary vectors come from {@code allocator} and are closed before returning.
   * Buffers of {@code root} may be moved out: the caller must not read it afterwards.
   */
  byte[] convert(VectorSchemaRoot root, DictionaryProvider dictionaries, BufferAllocator allocator) {
    int rows = root.getRowCount();
    Set<FieldVector> owned = Collections.newSetFromMap(new IdentityHashMap<>());
    try {
      List<FieldVector> out = new ArrayList<>(columns.size());
      for (Column column : columns) {
        FieldVector vector = root.getVector(column.index());
        if (column.dictionaryId() != null) {
          Dictionary dictionary = dictionaries.lookup(column.dictionaryId());
          if (dictionary == null) {
            throw SeException.invalid("column `%s`: dictionary %d is not defined", column.name(),
                column.dictionaryId());
          }
          vector = (FieldVector) DictionaryEncoder.decode(vector, dictionary, allocator);
          owned.add(vector);
        }
        if (column.nonNull() && vector.getNullCount() > 0) {
          throw SeException.invalid("column `%s`: null at row %d in a %s column", column.name(),
              firstNull(vector), column.role());
        }
        column.converter().checkNested(vector);
        FieldVector converted = column.converter().convert(vector, allocator);
        owned.add(converted);
        out.add(converted);
      }
      return ArrowIpc.write(outputMessage, output, out, rows);
    } finally {
      for (FieldVector vector : owned) {
        if (!isIn(root, vector)) {
          vector.close();
        }
      }
    }
  }

  private static boolean isIn(VectorSchemaRoot root, FieldVector vector) {
    for (FieldVector v : root.getFieldVectors()) {
      if (v == vector) {
        return true;
      }
    }
    return false;
  }

  private static int firstNull(FieldVector vector) {
    for (int row = 0; row < vector.getValueCount(); row++) {
      if (vector.isNull(row)) {
        return row;
      }
    }
    return -1;
  }
}
