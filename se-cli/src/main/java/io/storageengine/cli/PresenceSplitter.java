package io.storageengine.cli;

import io.storageengine.common.SeException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Cuts each batch read by {@link FileBatches} into parts whose Arrow schema is exactly the set of
 * columns their rows carry, so that a column a row lacks is absent from the batch the server sees
 * (a partial upsert keeps it) rather than null (which would overwrite it).
 *
 * <p>Order: rows of one part keep their file order. Within one source batch, rows are grouped by
 * their set of present columns, but a row whose key already went to a group with another column
 * set closes the current parts first, so the parts of a batch never hold the same key twice and
 * can be sent in the order returned. Each part carries the keys it holds, so the sender can keep
 * per-key order across streams.
 *
 * <p>Without presence columns (append tables, Parquet, Arrow) a batch is one part: a view of the
 * reader's root.
 */
final class PresenceSplitter {
  /** One batch to send; {@link #close} frees it when it owns its vectors. */
  record Part(VectorSchemaRoot root, Set<Object> keys, boolean owned) implements AutoCloseable {
    @Override
    public void close() {
      if (owned) {
        root.close();
      }
    }
  }

  private final FileBatches batches;
  private final List<String> keyColumns;
  private final List<String> required;
  private final BufferAllocator allocator;
  private long rowsBefore;

  /** {@code keyColumns}: the table's primary-key column names (empty: no key, no ordering constraint). */
  PresenceSplitter(FileBatches batches, List<String> keyColumns, BufferAllocator allocator) {
    this(batches, keyColumns, keyColumns, allocator);
  }

  /**
   * As above; {@code required} names the columns every row of the file must carry when the file
   * has them (an entity table's key and version columns): a row without a value there (an empty
   * CSV cell, a JSON key left out) is refused naming the row and the column, where the server
   * could only say the column is missing from a part.
   */
  PresenceSplitter(FileBatches batches, List<String> keyColumns, List<String> required, BufferAllocator allocator) {
    this.batches = batches;
    this.rowsBefore = batches.skipped();
    this.keyColumns = keyColumns;
    this.required = required;
    this.allocator = allocator;
  }

  /**
   * The parts of {@code source} (the reader's root after a batch was loaded), in the order they
   * must be sent.
   */
  List<Part> split(VectorSchemaRoot source) {
    int rows = source.getRowCount();
    int n = batches.dataColumns();
    if (!batches.perRowPresence()) {
      // One schema for the whole file, so one stream: its order is the file's order.
      rowsBefore += rows;
      return List.of(new Part(source, Set.of(), false));
    }
    BitVector[] flags = new BitVector[n];
    for (int i = 0; i < n; i++) {
      flags[i] = (BitVector) source.getVector(n + i);
    }
    BigIntVector keyCounts = batches.keyCounts() ? (BigIntVector) source.getVector(2 * n) : null;
    List<Integer> keyIndexes = keyIndexes(source, n);
    List<Integer> requiredIndexes = indexesOf(required, source, n);

    List<Part> parts = new ArrayList<>();
    Map<BitSet, List<Integer>> groups = new LinkedHashMap<>();
    Map<Object, BitSet> groupOfKey = new HashMap<>();
    try {
      for (int r = 0; r < rows; r++) {
        BitSet present = new BitSet(n);
        for (int i = 0; i < n; i++) {
          if (flags[i].get(r) == 1) {
            present.set(i);
          }
        }
        for (int i : requiredIndexes) {
          if (!present.get(i)) {
            throw SeException.invalid("row %d: column `%s` has no value (an empty CSV cell or a JSON key left out): "
                + "every row of an entity table needs its primary key%s", rowsBefore + r + 1,
                source.getVector(i).getName(), required.size() > keyColumns.size() ? " and version column" : "");
          }
        }
        if (keyCounts != null && keyCounts.get(r) != present.cardinality()) {
          throw SeException.invalid("row %d: has %d keys but %d of them are known columns (a key repeated on one line?)",
              rowsBefore + r + 1, keyCounts.get(r), present.cardinality());
        }
        Object key = keyIndexes.isEmpty() ? null : keyOf(source, keyIndexes, r);
        BitSet previous = key == null ? null : groupOfKey.get(key);
        if (previous != null && !previous.equals(present)) {
          flush(source, groups, parts, rows);
          groupOfKey.clear();
        }
        groups.computeIfAbsent(present, p -> new ArrayList<>()).add(r);
        if (key != null) {
          groupOfKey.put(key, present);
        }
      }
      flush(source, groups, parts, rows);
    } catch (RuntimeException e) {
      parts.forEach(Part::close);
      throw e;
    }
    rowsBefore += rows;
    return parts;
  }

  private void flush(VectorSchemaRoot source, Map<BitSet, List<Integer>> groups, List<Part> parts, int sourceRows) {
    for (Map.Entry<BitSet, List<Integer>> group : groups.entrySet()) {
      List<Integer> rows = group.getValue();
      BitSet columns = group.getKey();
      Set<Object> keys = keysOf(source, rows, columns);
      if (rows.size() == sourceRows) {
        // The whole batch shares one column set: a view of the present columns, no copy.
        List<FieldVector> vectors = new ArrayList<>();
        columns.stream().forEach(i -> vectors.add(source.getVector(i)));
        VectorSchemaRoot view = new VectorSchemaRoot(vectors);
        view.setRowCount(sourceRows);
        parts.add(new Part(view, keys, false));
        continue;
      }
      List<FieldVector> copies = new ArrayList<>();
      try {
        for (int i = columns.nextSetBit(0); i >= 0; i = columns.nextSetBit(i + 1)) {
          FieldVector from = source.getVector(i);
          Field field = from.getField();
          FieldVector to = field.createVector(allocator);
          copies.add(to);
          to.setInitialCapacity(rows.size());
          to.allocateNew();
          for (int j = 0; j < rows.size(); j++) {
            to.copyFromSafe(rows.get(j), j, from);
          }
          to.setValueCount(rows.size());
        }
      } catch (RuntimeException e) {
        copies.forEach(FieldVector::close);
        throw e;
      }
      VectorSchemaRoot part = new VectorSchemaRoot(copies);
      part.setRowCount(rows.size());
      parts.add(new Part(part, keys, true));
    }
    groups.clear();
  }

  private List<Integer> keyIndexes(VectorSchemaRoot source, int dataColumns) {
    return indexesOf(keyColumns, source, dataColumns);
  }

  /** The indexes among the first {@code dataColumns} columns of {@code source} of the columns {@code names}. */
  private static List<Integer> indexesOf(List<String> names, VectorSchemaRoot source, int dataColumns) {
    List<Integer> indexes = new ArrayList<>();
    for (String key : names) {
      for (int i = 0; i < dataColumns; i++) {
        if (source.getVector(i).getName().equalsIgnoreCase(key)) {
          indexes.add(i);
        }
      }
    }
    return indexes;
  }

  private Set<Object> keysOf(VectorSchemaRoot source, List<Integer> rows, BitSet columns) {
    List<Integer> indexes = new ArrayList<>();
    for (int i : keyIndexes(source, columns.length())) {
      if (columns.get(i)) {
        indexes.add(i);
      }
    }
    if (indexes.isEmpty()) {
      return Set.of();
    }
    Set<Object> keys = new HashSet<>();
    for (int r : rows) {
      keys.add(keyOf(source, indexes, r));
    }
    return keys;
  }

  /** The key of row {@code r}: the value of a one-column key, else the list of values. */
  private static Object keyOf(VectorSchemaRoot source, List<Integer> keyIndexes, int r) {
    if (keyIndexes.size() == 1) {
      Object value = source.getVector(keyIndexes.get(0)).getObject(r);
      return value == null ? List.of() : value;
    }
    List<Object> key = new ArrayList<>(keyIndexes.size());
    for (int i : keyIndexes) {
      key.add(source.getVector(i).getObject(r));
    }
    return key;
  }
}
