package io.storageengine.catalog;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class SupportedTypesTest {
  @Test
  void everyTypeIdIsClassified() {
    List<Type> supported = List.of(Types.BooleanType.get(), Types.IntegerType.get(), Types.LongType.get(),
        Types.FloatType.get(), Types.DoubleType.get(), Types.DecimalType.of(38, 2), Types.DateType.get(),
        Types.TimeType.get(), Types.TimestampType.withZone(), Types.TimestampType.withoutZone(),
        Types.TimestampNanoType.withoutZone(), Types.TimestampNanoType.withZone(), Types.StringType.get(),
        Types.UUIDType.get(), Types.FixedType.ofLength(3), Types.BinaryType.get(),
        Types.StructType.of(optional(1, "a", Types.IntegerType.get())),
        Types.ListType.ofOptional(2, Types.StringType.get()),
        Types.MapType.ofOptional(3, 4, Types.StringType.get(), Types.LongType.get()));
    // variant, unknown, geometry and geography: only as top-level columns (see
    // refusalNamesTheColumnByItsFullPathAndType and geospatialColumnsAreCarriedAtTheTopLevelWithAnyCrs).
    List<Type> unsupported = List.of(Types.GeometryType.crs84(), Types.VariantType.get(),
        Types.GeographyType.crs84(), Types.UnknownType.get(), Types.ListType.ofOptional(6, Types.GeometryType.crs84()),
        Types.ListType.ofOptional(5, Types.VariantType.get()));
    supported.forEach(t -> assertThat(SupportedTypes.isSupported(t)).as(t.toString()).isTrue());
    unsupported.forEach(t -> assertThat(SupportedTypes.isSupported(t)).as(t.toString()).isFalse());
    // Every type id Iceberg has is one of the two lists: a new one must be classified here.
    java.util.Set<Type.TypeID> seen = new java.util.HashSet<>();
    supported.forEach(t -> seen.add(t.typeId()));
    unsupported.forEach(t -> seen.add(t.typeId()));
    assertThat(seen).containsExactlyInAnyOrder(Type.TypeID.values());
  }

  @Test
  void refusalNamesTheColumnByItsFullPathAndType() {
    Schema top = new Schema(required(1, "id", Types.LongType.get()),
        optional(2, "l", Types.ListType.ofOptional(3, Types.GeographyType.crs84())));
    assertThatThrownBy(() -> SupportedTypes.requireIngestible("a.b", top))
        .isInstanceOf(SeException.class)
        .hasMessage("table a.b: column l.element has type " + Types.GeographyType.crs84() + ", which ingestion does "
            + "not support yet (only as a top-level column)")
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));

    Schema nested = new Schema(required(1, "id", Types.LongType.get()),
        optional(2, "s", Types.StructType.of(optional(3, "ok", Types.StringType.get()),
            optional(4, "tags", Types.MapType.ofOptional(5, 6, Types.StringType.get(),
                Types.ListType.ofOptional(7, Types.UnknownType.get()))))));
    assertThatThrownBy(() -> SupportedTypes.requireIngestible("a.b", nested))
        .isInstanceOf(SeException.class)
        .hasMessage("table a.b: column s.tags.value.element has type unknown, which ingestion does not support yet");

    // A top-level variant is carried; one inside a struct cannot be written to Parquet by DuckDB.
    SupportedTypes.requireIngestible("a.b", new Schema(required(1, "id", Types.LongType.get()),
        optional(2, "doc", Types.VariantType.get())));
    assertThatThrownBy(() -> SupportedTypes.requireIngestible("a.b", new Schema(required(1, "id", Types.LongType.get()),
        optional(2, "s", Types.StructType.of(optional(3, "doc", Types.VariantType.get()))))))
        .hasMessage("table a.b: column s.doc has type variant, which ingestion does not support yet");

    SupportedTypes.requireIngestible("a.b", new Schema(required(1, "id", Types.LongType.get()),
        optional(2, "ts", Types.TimestampNanoType.withoutZone()), optional(3, "at", Types.TimestampNanoType.withZone()),
        optional(4, "later", Types.UnknownType.get())));
  }

  @Test
  void geospatialColumnsAreCarriedAtTheTopLevelWithAnyCrs() {
    SupportedTypes.requireIngestible("a.b", new Schema(required(1, "id", Types.LongType.get()),
        optional(2, "g", Types.GeometryType.crs84()), optional(3, "h", Types.GeometryType.of("ogc:crs84")),
        optional(4, "srid", Types.GeometryType.of("srid:3857")), optional(5, "p", Types.GeometryType.of("projjson:crs")),
        optional(6, "geo", Types.GeographyType.crs84()),
        optional(7, "k", Types.GeographyType.of("srid:4326", org.apache.iceberg.types.EdgeAlgorithm.KARNEY))));
    assertThatThrownBy(() -> SupportedTypes.requireIngestible("a.b", new Schema(
        optional(1, "s", Types.StructType.of(optional(2, "g", Types.GeometryType.crs84()))))))
        .hasMessage("table a.b: column s.g has type " + Types.GeometryType.crs84()
            + ", which ingestion does not support yet (only as a top-level column)");
  }
}
