package io.storageengine.duckdb;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class DuckTypesTest {
  private static final DuckTypes.Unsupported REFUSE =
      (column, type) -> new SeException(ErrorCode.UNSUPPORTED, "column `" + column + "`: " + type);

  /** Every Iceberg type DuckDB holds, with the DuckDB type both reconcile and queries use. */
  private static Map<Type, String> supported() {
    Map<Type, String> types = new LinkedHashMap<>();
    types.put(Types.BooleanType.get(), "BOOLEAN");
    types.put(Types.IntegerType.get(), "INTEGER");
    types.put(Types.LongType.get(), "BIGINT");
    types.put(Types.FloatType.get(), "FLOAT");
    types.put(Types.DoubleType.get(), "DOUBLE");
    types.put(Types.DecimalType.of(38, 9), "DECIMAL(38,9)");
    types.put(Types.DateType.get(), "DATE");
    types.put(Types.TimeType.get(), "TIME");
    types.put(Types.TimestampType.withoutZone(), "TIMESTAMP");
    types.put(Types.TimestampType.withZone(), "TIMESTAMPTZ");
    types.put(Types.TimestampNanoType.withoutZone(), "TIMESTAMP_NS");
    types.put(Types.TimestampNanoType.withZone(), "TIMESTAMPTZ_NS");
    types.put(Types.StringType.get(), "VARCHAR");
    types.put(Types.UnknownType.get(), "\"NULL\"");
    types.put(Types.UUIDType.get(), "UUID");
    types.put(Types.FixedType.ofLength(16), "BLOB");
    types.put(Types.BinaryType.get(), "BLOB");
    types.put(Types.VariantType.get(), "VARIANT");
    types.put(Types.StructType.of(
        Types.NestedField.optional(1, "a", Types.IntegerType.get()),
        Types.NestedField.required(2, "we\"ird", Types.StringType.get())),
        "STRUCT(\"a\" INTEGER, \"we\"\"ird\" VARCHAR)");
    types.put(Types.ListType.ofOptional(3, Types.LongType.get()), "BIGINT[]");
    types.put(Types.GeometryType.crs84(), "GEOMETRY");
    // The CRS and edge algorithm stay in the Iceberg type (reconciliation writes them into the
    // Parquet logical type); DuckDB holds a geometry as GEOMETRY and a geography as its WKB.
    types.put(Types.GeometryType.of("srid:3857"), "GEOMETRY");
    types.put(Types.GeographyType.crs84(), "BLOB");
    types.put(Types.GeographyType.of("srid:4326", org.apache.iceberg.types.EdgeAlgorithm.KARNEY), "BLOB");
    types.put(Types.StructType.of(Types.NestedField.optional(11, "g", Types.GeographyType.crs84())),
        "STRUCT(\"g\" BLOB)");
    types.put(Types.MapType.ofOptional(4, 5, Types.StringType.get(), Types.DoubleType.get()), "MAP(VARCHAR, DOUBLE)");
    types.put(Types.ListType.ofRequired(6, Types.StructType.of(
        Types.NestedField.optional(7, "m", Types.MapType.ofRequired(8, 9, Types.UUIDType.get(),
            Types.ListType.ofOptional(10, Types.DecimalType.of(10, 2)))))),
        "STRUCT(\"m\" MAP(UUID, DECIMAL(10,2)[]))[]");
    return types;
  }

  @Test
  void everyIcebergTypeIsPinned() {
    Set<Type.TypeID> covered = EnumSet.noneOf(Type.TypeID.class);
    supported().keySet().forEach(t -> covered.add(t.typeId()));
    assertThat(covered).as("a new Iceberg type needs a decision here").isEqualTo(EnumSet.allOf(Type.TypeID.class));
    supported().forEach((type, duck) -> assertThat(DuckTypes.of("c", type, REFUSE)).as(type.toString()).isEqualTo(duck));
  }

  @Test
  void identifiersAndLiteralsAreQuoted() {
    assertThat(SqlQuoting.identifier("plain")).isEqualTo("\"plain\"");
    assertThat(SqlQuoting.identifier("a\"b\"\"")).isEqualTo("\"a\"\"b\"\"\"\"\"");
    assertThat(SqlQuoting.identifier("it's")).isEqualTo("\"it's\"");
    assertThat(SqlQuoting.literal("it's")).isEqualTo("'it''s'");
    assertThat(SqlQuoting.literal("''")).isEqualTo("''''''");
    assertThat(SqlQuoting.literal("say \"x\"")).isEqualTo("'say \"x\"'");
    assertThat(SqlQuoting.literal("")).isEqualTo("''");
  }
}
