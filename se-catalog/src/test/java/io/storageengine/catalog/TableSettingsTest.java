package io.storageengine.catalog;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One rule per {@code se.*} key: parsing, default and the refusal message of each. */
class TableSettingsTest {
  static final Schema KEYED = new Schema(List.of(
      required(1, "id", Types.LongType.get()),
      optional(2, "name", Types.StringType.get()),
      required(3, "ver", Types.LongType.get()),
      optional(4, "at", Types.TimestampNanoType.withZone()),
      optional(5, "s", Types.StructType.of(optional(6, "x", Types.IntegerType.get())))), Set.of(1));

  @TempDir Path dir;

  private static TableSettings settings(Map<String, String> properties) {
    return TableSettings.of("c.a.t", KEYED, properties);
  }

  private static Map<String, String> entity(String... more) {
    Map<String, String> props = new HashMap<>(Map.of(TableProperties.MODE, "entity"));
    for (int i = 0; i < more.length; i += 2) {
      props.put(more[i], more[i + 1]);
    }
    return props;
  }

  private static void assertRefused(Map<String, String> properties, String message) {
    assertThatThrownBy(() -> settings(properties))
        .isInstanceOf(SeException.class)
        .hasMessage(message)
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
  }

  @Test
  void variantShreddingIsCarriedForAppendAndEntityTables() {
    Schema withVariant = new Schema(List.of(
        required(1, "id", Types.LongType.get()),
        optional(2, "doc", Types.VariantType.get()),
        optional(3, "raw", Types.VariantType.get())), Set.of(1));
    Map<String, String> props = new HashMap<>(Map.of(
        "se.variant.shredding.doc", "a bigint", "se.variant.shredding.raw", "auto"));
    TableSettings append = TableSettings.of("c.a.t", withVariant, props);
    assertThat(append.variantShredding()).containsOnlyKeys("doc");
    assertThat(append.variantShredding().get("doc").mode()).isEqualTo(VariantShredding.Mode.TYPED);
    props.put(TableProperties.MODE, "entity");
    props.put("se.variant.shredding.raw", "off");
    TableSettings entity = TableSettings.of("c.a.t", withVariant, props);
    assertThat(entity.variantShredding()).containsOnlyKeys("doc", "raw");
    assertThat(entity.variantShredding().get("raw").mode()).isEqualTo(VariantShredding.Mode.OFF);
    assertThat(settings(Map.of()).variantShredding()).isEmpty();
  }

  @Test
  void modeDefaultsToAppendAndIsCaseInsensitive() {
    assertThat(settings(Map.of()).mode()).isEqualTo(TableDefinition.Mode.APPEND);
    assertThat(settings(Map.of()).entity()).isFalse();
    for (String append : new String[] {"append", "APPEND", "Append", " append "}) {
      assertThat(settings(Map.of(TableProperties.MODE, append)).mode()).isEqualTo(TableDefinition.Mode.APPEND);
    }
    for (String entity : new String[] {"entity", "Entity", "ENTITY", "eNtItY\t"}) {
      TableSettings s = settings(Map.of(TableProperties.MODE, entity));
      assertThat(s.mode()).isEqualTo(TableDefinition.Mode.ENTITY);
      assertThat(s.entity()).isTrue();
    }
  }

  @Test
  void anyOtherModeIsRefusedNamingTableAndValue() {
    assertRefused(Map.of(TableProperties.MODE, "foo"), "table c.a.t: se.mode 'foo' is not append or entity");
    assertRefused(Map.of(TableProperties.MODE, ""), "table c.a.t: se.mode '' is not append or entity");
    assertRefused(Map.of(TableProperties.MODE, "entities"), "table c.a.t: se.mode 'entities' is not append or entity");
    assertThatThrownBy(() -> TableSettings.parseMode("x.y", "upsert"))
        .isInstanceOf(SeException.class).hasMessage("table x.y: se.mode 'upsert' is not append or entity");
  }

  @Test
  void primaryKeyIsTheIdentifierFieldsAndRequiredOnEntityTables() {
    TableSettings s = settings(entity());
    assertThat(s.primaryKeyNames()).containsExactly("id");
    assertThat(s.primaryKey()).extracting(Types.NestedField::fieldId).containsExactly(1);
    assertThat(settings(Map.of()).primaryKey()).isEmpty();

    Schema noKey = new Schema(required(1, "id", Types.LongType.get()));
    assertThatThrownBy(() -> TableSettings.of("c.a.t", noKey, entity()))
        .isInstanceOf(SeException.class)
        .hasMessage("table c.a.t: an entity table needs a primary key (the schema's identifier fields), "
            + "and this one has none");
    // An append table has no key to need.
    assertThat(TableSettings.of("c.a.t", noKey, Map.of()).primaryKey()).isEmpty();
  }

  @Test
  void versionColumnIsOptionalTopLevelNotKeyAndOrdered() {
    assertThat(settings(entity()).versionColumn()).isEmpty();
    assertThat(settings(entity(TableProperties.VERSION_COLUMN, " ")).versionColumn()).isEmpty();
    assertThat(settings(entity(TableProperties.VERSION_COLUMN, "ver")).versionColumnName()).contains("ver");
    assertThat(settings(entity(TableProperties.VERSION_COLUMN, "at")).versionColumn().orElseThrow().fieldId())
        .isEqualTo(4);
    assertRefused(entity(TableProperties.VERSION_COLUMN, "nope"),
        "table c.a.t: se.version-column 'nope' is not a top-level column of the table");
    assertRefused(entity(TableProperties.VERSION_COLUMN, "VER"),
        "table c.a.t: se.version-column 'VER' is not a top-level column of the table");
    assertRefused(entity(TableProperties.VERSION_COLUMN, "s.x"),
        "table c.a.t: se.version-column 's.x' is not a top-level column of the table");
    assertRefused(entity(TableProperties.VERSION_COLUMN, "id"),
        "table c.a.t: se.version-column 'id' is part of the primary key");
    assertRefused(entity(TableProperties.VERSION_COLUMN, "name"),
        "table c.a.t: se.version-column 'name' has type string; it must be numeric (int, bigint, float, double, "
            + "decimal), date or timestamp");
    // Entity-only keys mean nothing on an append table and are not read.
    assertThat(settings(Map.of(TableProperties.VERSION_COLUMN, "nope")).versionColumn()).isEmpty();
  }

  @Test
  void tombstoneRetentionIsMillisOrIsoDurationElseTheDefault() {
    Duration fallback = Duration.ofDays(7);
    assertThat(settings(entity()).tombstoneRetention(fallback)).isEqualTo(fallback);
    assertThat(settings(entity(TableProperties.TOMBSTONE_RETENTION, "")).tombstoneRetention(fallback))
        .isEqualTo(fallback);
    assertThat(settings(entity(TableProperties.TOMBSTONE_RETENTION, "P1D")).tombstoneRetention(fallback))
        .isEqualTo(Duration.ofDays(1));
    assertThat(settings(entity(TableProperties.TOMBSTONE_RETENTION, "pt36h")).tombstoneRetention(fallback))
        .isEqualTo(Duration.ofHours(36));
    assertThat(settings(entity(TableProperties.TOMBSTONE_RETENTION, "60000")).tombstoneRetention(fallback))
        .isEqualTo(Duration.ofMinutes(1));
    assertThat(settings(entity(TableProperties.TOMBSTONE_RETENTION, "0")).tombstoneRetention(fallback))
        .isEqualTo(Duration.ZERO);
    assertRefused(entity(TableProperties.TOMBSTONE_RETENTION, "7 days"),
        "table c.a.t: se.tombstone-retention '7 days' is neither an ISO-8601 duration (e.g. P7D) nor a number "
            + "of milliseconds");
    assertRefused(entity(TableProperties.TOMBSTONE_RETENTION, "-PT1H"),
        "table c.a.t: se.tombstone-retention '-PT1H' is negative");
    assertThat(settings(Map.of(TableProperties.TOMBSTONE_RETENTION, "junk")).tombstoneRetention(fallback))
        .isEqualTo(fallback);
  }

  @Test
  void sliceCountIsAWholeNumberUpTo256OnEntityTablesOnly() {
    assertThat(settings(entity()).sliced()).isFalse();
    assertThat(settings(entity(TableProperties.SLICE_COUNT, " ")).sliceCount()).isZero();
    assertThat(settings(entity(TableProperties.SLICE_COUNT, "4")).sliceCount()).isEqualTo(4);
    assertThat(settings(entity(TableProperties.SLICE_COUNT, " 256 ")).sliced()).isTrue();
    for (String bad : List.of("0", "257", "-1", "four", "1.5")) {
      assertRefused(entity(TableProperties.SLICE_COUNT, bad),
          "table c.a.t: se.slice.count '" + bad + "' is not a whole number from 1 to 256");
    }
    assertThat(settings(Map.of(TableProperties.SLICE_COUNT, "junk")).sliced()).isFalse();
  }

  @Test
  void sliceTargetRowsIsAPositiveWholeNumberWithADefault() {
    assertThat(TableSettings.parseSliceTargetRows("t", null)).isEqualTo(TableSettings.DEFAULT_SLICE_TARGET_ROWS);
    assertThat(TableSettings.parseSliceTargetRows("t", " ")).isEqualTo(4_000_000L);
    assertThat(TableSettings.parseSliceTargetRows("t", " 20 ")).isEqualTo(20);
    for (String bad : List.of("0", "-1", "many", "1.5")) {
      assertThatThrownBy(() -> TableSettings.parseSliceTargetRows("c.a.t", bad))
          .hasMessage("table c.a.t: se.slice.target-rows '" + bad + "' is not a positive whole number");
    }
  }

  @Test
  void slicesAreEqualHashRangesAndFilesNameTheirSlice() {
    List<TableSlices.Slice> slices = TableSlices.uniform(3);
    assertThat(slices).extracting(TableSlices.Slice::lo).containsExactly(0L, 1431655765L, 2863311530L);
    assertThat(slices.get(2).hi()).isEqualTo(TableSlices.HASH_SPACE);
    assertThat(slices.get(0).range()).isEqualTo("00000000-55555554");
    // MD5("abc") = 900150983cd24fb0...: the first four bytes.
    assertThat(TableSlices.hash("abc")).isEqualTo(0x90015098L);
    assertThat(TableSlices.owner(slices, 0x90015098L).id()).isEqualTo(1);
    assertThat(TableSlices.sliceOfFile("s3://b/t/data/" + TableSlices.fileName(12, "00001-x.parquet")))
        .hasValue(12);
    assertThat(TableSlices.sliceOfFile("file:/t/data/00001-x.parquet")).isEmpty();
    assertThat(TableSlices.sliceOfFile("file:/t/data/slice-x-1.parquet")).isEmpty();
  }

  @Test
  void describeReadsTheSameSettings() {
    Catalog catalog = new CatalogFactory(Optional.of(dir)).build("t", CatalogConfig.embedded());
    try {
      TableIdentifier id = TableIdentifier.of("a", "mixed");
      Table table = catalog.buildTable(id, KEYED).withPartitionSpec(PartitionSpec.unpartitioned())
          .withProperties(Map.of("format-version", "3", TableProperties.MODE, "Entity",
              TableProperties.VERSION_COLUMN, "ver"))
          .create();
      TableDescription d = Tables.describe(table);
      assertThat(d.mode()).isEqualTo(TableDefinition.Mode.ENTITY);
      assertThat(d.primaryKey()).containsExactly("id");
      assertThat(d.versionColumn()).contains("ver");
      assertThat(TableSettings.of(table).table()).isEqualTo(table.name());

      table.updateProperties().set(TableProperties.MODE, "ledger").commit();
      assertThatThrownBy(() -> Tables.describe(catalog.loadTable(id)))
          .isInstanceOf(SeException.class)
          .hasMessage("table " + table.name() + ": se.mode 'ledger' is not append or entity");
    } finally {
      try {
        ((AutoCloseable) catalog).close();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
  }
}
