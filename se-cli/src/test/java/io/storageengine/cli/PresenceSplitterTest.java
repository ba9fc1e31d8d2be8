package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.SeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How file rows become batches whose schema is the set of columns the rows carry. */
class PresenceSplitterTest {
  private static final Schema TABLE = new Schema(
      List.of(Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "a", Types.LongType.get()),
          Types.NestedField.optional(3, "b", Types.StringType.get())),
      java.util.Set.of(1));

  @TempDir Path dir;
  private final BufferAllocator allocator = new RootAllocator();

  @AfterEach
  void closeAllocator() {
    allocator.close(); // fails the test on a leaked buffer
  }

  @Test
  void rowsGroupByPresentColumnsAndAKeySeenInAnotherGroupStartsNewParts() throws Exception {
    List<String> parts = split(FileBatches.Format.JSON, """
        {"id":1,"a":1}
        {"id":2,"b":"two"}
        {"id":3,"a":3}
        {"id":1,"b":"one"}
        {"id":4,"a":null,"b":"four"}
        {"id":5,"a":5}
        """, null);

    // id 1 appears with {id,a} and later {id,b}: that second row must follow the first, so it
    // opens new parts; an explicit null is a present column.
    assertThat(parts).containsExactly(
        "[id, a] keys=[1, 3] rows=1,1;3,3",
        "[id, b] keys=[2] rows=2,two",
        "[id, b] keys=[1] rows=1,one",
        "[id, a, b] keys=[4] rows=4,null,four",
        "[id, a] keys=[5] rows=5,5");
  }

  @Test
  void oneColumnSetIsOneUncopiedPart() throws Exception {
    assertThat(split(FileBatches.Format.JSON, "{\"id\":1,\"a\":1}\n{\"id\":2,\"a\":null}\n", null))
        .containsExactly("[id, a] keys=[1, 2] rows=1,1;2,null");
  }

  @Test
  void csvEmptyCellsAreAbsentQuotedEmptyIsTextAndTheNullStringIsNull() throws Exception {
    List<String> parts = split(FileBatches.Format.CSV, "id,a,b\n1,,x\n2,NULL,\"\"\n3,7,NULL\n", "NULL");
    assertThat(parts).containsExactly(
        "[id, b] keys=[1] rows=1,x",
        "[id, a, b] keys=[2, 3] rows=2,null,;3,7,null");
  }

  @Test
  void aRepeatedKeyOnOneLineIsNamed() throws Exception {
    assertThatThrownBy(() -> split(FileBatches.Format.JSON, "{\"id\":1,\"a\":1}\n{\"id\":2,\"a\":1,\"a\":2}\n", null))
        .isInstanceOf(SeException.class)
        .hasMessageContaining("row 2: has 3 keys but 2 of them are known columns");
  }

  @Test
  void aRowWithoutItsKeyIsNamedWithTheColumn() throws Exception {
    assertThatThrownBy(() -> split(FileBatches.Format.CSV, "id,a,b\n1,1,x\n,2,y\n", null))
        .isInstanceOf(SeException.class)
        .hasMessageContaining("row 2: column `id` has no value (an empty CSV cell or a JSON key left out)")
        .hasMessageContaining("needs its primary key");
  }

  @Test
  void aRowWithoutTheVersionColumnIsNamedWithTheColumn() throws Exception {
    // `a` plays the version column: the first row has it, the third leaves it out.
    assertThat(split(FileBatches.Format.JSON, "{\"id\":1,\"a\":1}\n{\"id\":2,\"a\":3,\"b\":\"x\"}\n", null,
        List.of("id", "a"))).containsExactly("[id, a] keys=[1] rows=1,1", "[id, a, b] keys=[2] rows=2,3,x");
    assertThatThrownBy(() -> split(FileBatches.Format.JSON,
        "{\"id\":1,\"a\":1}\n{\"id\":2,\"a\":3}\n{\"id\":3,\"b\":\"x\"}\n", null, List.of("id", "a")))
        .isInstanceOf(SeException.class)
        .hasMessageContaining("row 3: column `a` has no value")
        .hasMessageContaining("needs its primary key and version column");
  }

  private List<String> split(FileBatches.Format format, String text, String nullString) throws Exception {
    return split(format, text, nullString, List.of("id"));
  }

  private List<String> split(FileBatches.Format format, String text, String nullString, List<String> required)
      throws Exception {
    Path file = dir.resolve("rows." + format.name().toLowerCase(java.util.Locale.ROOT));
    Files.writeString(file, text);
    List<String> described = new ArrayList<>();
    try (FileBatches batches = FileBatches.open(file, format, TABLE, true, nullString, allocator, 1024)) {
      PresenceSplitter splitter = new PresenceSplitter(batches, List.of("id"), required, allocator);
      while (batches.reader().loadNextBatch()) {
        for (PresenceSplitter.Part part : splitter.split(batches.reader().getVectorSchemaRoot())) {
          try (part) {
            described.add(describe(part));
          }
        }
      }
    }
    return described;
  }

  private static String describe(PresenceSplitter.Part part) {
    VectorSchemaRoot root = part.root();
    List<String> names = root.getFieldVectors().stream().map(FieldVector::getName).toList();
    List<String> rows = new ArrayList<>();
    for (int r = 0; r < root.getRowCount(); r++) {
      List<String> cells = new ArrayList<>();
      for (FieldVector v : root.getFieldVectors()) {
        cells.add(String.valueOf(v.getObject(r)));
      }
      rows.add(String.join(",", cells));
    }
    List<String> keys = part.keys().stream().map(String::valueOf).sorted().toList();
    return names + " keys=" + keys + " rows=" + String.join(";", rows);
  }
}
