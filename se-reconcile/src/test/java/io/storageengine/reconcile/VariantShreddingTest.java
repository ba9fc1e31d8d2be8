package io.storageengine.reconcile;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.TableSettings;
import io.storageengine.catalog.VariantShredding;
import io.storageengine.catalog.VariantValues;
import io.storageengine.common.SeException;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalOperation;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.variants.Variant;
import org.apache.iceberg.variants.VariantMetadata;
import org.apache.iceberg.variants.VariantValue;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.schema.GroupType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code se.variant.shredding.<column>}: typed fields become typed Parquet columns with
 * statistics, so a filter on one prunes row groups (DuckDB's EXPLAIN ANALYZE counts) when every
 * field of the objects is typed, {@code off}
 * writes no typed column, and Iceberg's generic reader reads the same values back either way.
 */
class VariantShreddingTest {
  private static final Schema SCHEMA = new Schema(required(1, "id", Types.LongType.get()),
      optional(2, "doc", Types.VariantType.get()));
  private static final int ROWS = 5 * 2048;
  private static final int ROW_GROUP = 2048;

  @Test
  void typedFieldsPruneRowGroupsAndOffWritesNone(@TempDir Path dir) throws Exception {
    try (TestEnvironment env = new TestEnvironment(dir)) {
      Path typed = reconcile(env, dir, "typed", "user string, score double, tags list<string>, note string");
      assertThat(typedFields(typed)).containsExactlyInAnyOrder("user", "score", "tags", "note");
      // Each row group holds one user: the typed column's statistics skip the other four.
      assertThat(explain(typed, "doc.user::VARCHAR = 'u3'")).contains("Row Groups Scanned: 1 / 5");
      assertThat(explain(typed, "doc.score::DOUBLE > 9000")).contains("Row Groups Scanned: 1 / 5");
      assertThat(count(typed, "doc.user::VARCHAR = 'u3'")).isEqualTo(ROW_GROUP);
      assertThat(count(typed, "doc.note::VARCHAR = 'n7'")).isEqualTo(ROWS / 10);

      // DuckDB 2.0 prunes by a typed field only where no object keeps a field in the binary
      // value: with note left out, every row group is read (the values are still right).
      Path partial = reconcile(env, dir, "partial", "user string");
      assertThat(typedFields(partial)).containsExactly("user");
      assertThat(explain(partial, "doc.user::VARCHAR = 'u3'")).contains("Row Groups Scanned: 5 / 5");
      assertThat(count(partial, "doc.user::VARCHAR = 'u3'")).isEqualTo(ROW_GROUP);

      Path off = reconcile(env, dir, "off", "OFF");
      assertThat(typedFields(off)).isEmpty();
      assertThat(explain(off, "doc.user::VARCHAR = 'u3'")).contains("Row Groups Scanned: 5 / 5");
      assertThat(count(off, "doc.user::VARCHAR = 'u3'")).isEqualTo(ROW_GROUP);
    }
  }

  @Test
  void badValuesNameTheTablePropertyAndValue() {
    Schema schema = new Schema(required(1, "id", Types.LongType.get()), optional(2, "doc", Types.VariantType.get()),
        optional(3, "s", Types.StringType.get()));
    assertThatThrownBy(() -> TableSettings.of("c.ns.t", schema, Map.of("se.variant.shredding.doc", "user strng")))
        .isInstanceOf(SeException.class)
        .hasMessage("table c.ns.t: se.variant.shredding.doc 'user strng' is not auto, off or a list of typed fields:"
            + " schema: unknown type 'strng' for column 'user' at position 6");
    assertThatThrownBy(() -> TableSettings.of("c.ns.t", schema, Map.of("se.variant.shredding.s", "auto")))
        .isInstanceOf(SeException.class)
        .hasMessage("table c.ns.t: se.variant.shredding.s 'auto': column s is string, not variant");
    // A column renamed or dropped since its property was set: the property is ignored, the table
    // keeps working (ingestion and reconciliation read these settings too).
    TableSettings.of("c.ns.t", schema, Map.of("se.variant.shredding.nope", "off"));
    assertThat(VariantShredding.of("c.ns.t", schema, Map.of("se.variant.shredding.nope", "off"))).isEmpty();
    assertThatThrownBy(() -> TableSettings.of("c.ns.t", schema, Map.of("se.variant.shredding.doc", "m map<string, int>")))
        .isInstanceOf(SeException.class)
        .hasMessage("table c.ns.t: se.variant.shredding.doc 'm map<string, int>': field m: map<string, int> cannot be"
            + " shredded (only primitives, struct and list)");
    assertThat(VariantShredding.of("t", schema, Map.of("se.variant.shredding.doc", " Auto "))).isEmpty();
    assertThat(VariantShredding.of("t", schema, Map.of("se.variant.shredding.doc", "a bigint")).get("doc").fields())
        .isEqualTo(Types.StructType.of(optional(1, "a", Types.LongType.get())));
  }

  /** Reconciles {@value #ROWS} rows into a new table with {@code shredding}; the local copy of its one data file. */
  private static Path reconcile(TestEnvironment env, Path dir, String name, String shredding) throws Exception {
    Table table = env.createTable(name, SCHEMA, PartitionSpec.unpartitioned(), SortOrder.unsorted(),
        Map.of("se.variant.shredding.doc", shredding));
    TableWal tw = env.walOf(table, name);
    List<Record> rows = new ArrayList<>();
    for (int i = 0; i < ROWS; i++) {
      Record r = GenericRecord.create(SCHEMA);
      r.setField("id", (long) i);
      r.setField("doc", variant("{\"user\":\"u" + (i / ROW_GROUP) + "\",\"score\":" + (i + 0.5)
          + ",\"tags\":[\"t" + (i % 3) + "\"],\"note\":\"n" + (i % 10) + "\"}"));
      rows.add(r);
    }
    env.append(tw, ArrowFrames.frame(env.allocator, WalOperation.UPSERT, 0, SCHEMA, rows));
    ReconcileOptions options = TestEnvironment.options().withTargetFileSize(512L << 20, ROW_GROUP);
    assertThat(env.reconciler(options).reconcile(tw).outcome()).isEqualTo(ReconcileResult.Outcome.COMMITTED);
    table.refresh();
    List<Record> read = TestEnvironment.readAll(table);
    assertThat(read).hasSize(ROWS);
    Record first = read.stream().filter(r -> (Long) r.getField("id") == 8321L).findFirst().orElseThrow();
    assertThat(first.getField("doc").toString()).contains("u4").contains("8321.5").contains("n1");
    List<String> files = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      tasks.forEach(t -> files.add(t.file().location()));
    }
    assertThat(files).hasSize(1);
    Path local = dir.resolve(name + ".parquet");
    try (InputStream in = table.io().newInputFile(files.get(0)).newStream()) {
      Files.copy(in, local, StandardCopyOption.REPLACE_EXISTING);
    }
    return local;
  }

  private static Variant variant(String json) {
    VariantValues.Encoded encoded = VariantValues.fromJson(json);
    VariantMetadata metadata = VariantMetadata.from(ByteBuffer.wrap(encoded.metadata()).order(ByteOrder.LITTLE_ENDIAN));
    return Variant.of(metadata, VariantValue.from(metadata, ByteBuffer.wrap(encoded.value()).order(ByteOrder.LITTLE_ENDIAN)));
  }

  /** The fields of {@code doc}'s typed_value group in the file's Parquet schema (none when unshredded). */
  private static List<String> typedFields(Path file) throws Exception {
    try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(file))) {
      GroupType doc = reader.getFooter().getFileMetaData().getSchema().getType("doc").asGroupType();
      if (!doc.containsField("typed_value")) {
        return List.of();
      }
      return doc.getType("typed_value").asGroupType().getFields().stream()
          .map(org.apache.parquet.schema.Type::getName).toList();
    }
  }

  private static String explain(Path file, String filter) throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("EXPLAIN ANALYZE SELECT sum(id) FROM read_parquet('" + file + "') WHERE "
            + filter)) {
      StringBuilder plan = new StringBuilder();
      while (rs.next()) {
        for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
          plan.append(rs.getString(i)).append('\n');
        }
      }
      return plan.toString();
    }
  }

  private static long count(Path file, String filter) throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*) FROM read_parquet('" + file + "') WHERE " + filter)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
