package io.storageengine.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableProperties;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.wal.WalOperation;
import java.io.ByteArrayInputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TimeStampMilliTZVector;
import org.apache.arrow.vector.TimeStampSecVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ViewVarCharVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.complex.impl.UnionLargeListWriter;
import org.apache.arrow.vector.complex.impl.UnionMapWriter;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryEncoder;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Every validation rule and widening of ARCHITECTURE.md 6.3, on real Arrow vectors. */
class BatchValidatorTest {
  static final Schema WIDE = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "small", Types.IntegerType.get()),
      Types.NestedField.optional(3, "amount", Types.DoubleType.get()),
      Types.NestedField.optional(4, "price", Types.DecimalType.of(10, 2)),
      Types.NestedField.optional(5, "ts", Types.TimestampType.withZone()),
      Types.NestedField.optional(6, "local", Types.TimestampType.withoutZone()),
      Types.NestedField.optional(7, "name", Types.StringType.get()),
      Types.NestedField.optional(8, "payload", Types.BinaryType.get()),
      Types.NestedField.optional(9, "code", Types.FixedType.ofLength(4)),
      Types.NestedField.optional(10, "uid", Types.UUIDType.get()),
      Types.NestedField.optional(11, "day", Types.DateType.get()),
      Types.NestedField.optional(12, "tod", Types.TimeType.get()),
      Types.NestedField.optional(13, "addr", Types.StructType.of(
          Types.NestedField.required(14, "street", Types.StringType.get()),
          Types.NestedField.optional(15, "zip", Types.LongType.get()),
          Types.NestedField.optional(16, "note", Types.StringType.get()))),
      Types.NestedField.optional(17, "tags", Types.ListType.ofRequired(18, Types.LongType.get())),
      Types.NestedField.optional(19, "attrs",
          Types.MapType.ofOptional(20, 21, Types.StringType.get(), Types.DoubleType.get())));

  static final Schema PEOPLE = new Schema(List.of(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "name", Types.StringType.get()),
      Types.NestedField.required(3, "age", Types.IntegerType.get()),
      Types.NestedField.optional(4, "version", Types.LongType.get())), java.util.Set.of(1));

  BufferAllocator allocator;
  InMemoryCatalog catalog;
  Table wide;
  Table people;

  @BeforeEach
  void setUp() {
    allocator = new RootAllocator();
    catalog = new InMemoryCatalog();
    catalog.initialize("tenant", Map.of());
    catalog.createNamespace(Namespace.of("sales"));
    wide = catalog.createTable(TableIdentifier.of("sales", "wide"), WIDE,
        PartitionSpec.unpartitioned());
    people = catalog.buildTable(TableIdentifier.of("sales", "people"), PEOPLE)
        .withProperties(Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY,
            TableProperties.VERSION_COLUMN, "version", "format-version", "3"))
        .create();
  }

  @AfterEach
  void tearDown() {
    allocator.close();
  }

  static Field field(String name, ArrowType type, Field... children) {
    return new Field(name, FieldType.nullable(type), List.of(children));
  }

  static IngestTarget target(Table table, WalOperation op) {
    return TableResolver.target("tenant", TableIdentifier.of("sales", table.name()
        .substring(table.name().lastIndexOf('.') + 1)), table, op);
  }

  /** Validates and converts {@code root}, then hands the decoded WAL batch to {@code check}. */
  void convert(Table table, WalOperation op, VectorSchemaRoot root, DictionaryProvider dictionaries,
      Consumer<VectorSchemaRoot> check) throws Exception {
    BatchValidator validator = BatchValidator.forStream(target(table, op), root.getSchema(),
        dictionaries);
    byte[] ipc;
    try (BufferAllocator stream = allocator.newChildAllocator("stream", 0, 1 << 24)) {
      ipc = validator.convert(root, dictionaries, stream);
    }
    try (ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(ipc), allocator)) {
      assertThat(reader.loadNextBatch()).isTrue();
      VectorSchemaRoot out = reader.getVectorSchemaRoot();
      for (Field f : out.getSchema().getFields()) {
        Types.NestedField column = table.schema().findField(f.getName());
        assertThat(f).as("column %s has the table's type and field ids", f.getName())
            .isEqualTo(IcebergArrowSchemas.toArrow(column));
      }
      check.accept(out);
    }
  }

  SeException planError(Table table, WalOperation op, Field... fields) {
    org.apache.arrow.vector.types.pojo.Schema schema =
        new org.apache.arrow.vector.types.pojo.Schema(List.of(fields));
    try {
      BatchValidator.forStream(target(table, op), schema, null);
    } catch (SeException e) {
      assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
      return e;
    }
    throw new AssertionError("no error for " + schema);
  }

  static final Field ID64 = field("id", new ArrowType.Int(64, true));

  @Test
  void safeWideningsBecomeTheTableTypes() throws Exception {
    Field addr = field("addr", ArrowType.Struct.INSTANCE,
        field("zip", new ArrowType.Int(32, true)), field("street", ArrowType.Utf8.INSTANCE));
    Field tags = field("tags", ArrowType.LargeList.INSTANCE,
        field("item", new ArrowType.Int(32, true)));
    Field attrs = new Field("attrs", FieldType.nullable(new ArrowType.Map(false)), List.of(
        new Field("entries", FieldType.notNullable(ArrowType.Struct.INSTANCE), List.of(
            new Field("key", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null),
            field("value", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE))))));
    List<Field> fields = List.of(
        field("id", new ArrowType.Int(32, true)),
        field("small", new ArrowType.Int(8, true)),
        field("amount", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
        field("price", new ArrowType.Decimal(8, 2, 128)),
        field("ts", new ArrowType.Timestamp(TimeUnit.MILLISECOND, "Europe/Paris")),
        field("local", new ArrowType.Timestamp(TimeUnit.SECOND, null)),
        field("name", ArrowType.LargeUtf8.INSTANCE),
        field("payload", ArrowType.LargeBinary.INSTANCE),
        field("code", new ArrowType.FixedSizeBinary(4)),
        field("uid", new ArrowType.FixedSizeBinary(16)),
        field("day", new ArrowType.Date(DateUnit.DAY)),
        field("tod", new ArrowType.Time(TimeUnit.MILLISECOND, 32)),
        addr, tags, attrs);
    try (VectorSchemaRoot root = VectorSchemaRoot.create(
        new org.apache.arrow.vector.types.pojo.Schema(fields), allocator)) {
      root.allocateNew();
      ((IntVector) root.getVector("id")).setSafe(0, 7);
      ((IntVector) root.getVector("id")).setSafe(1, -8);
      ((TinyIntVector) root.getVector("small")).setSafe(0, -3);
      ((Float4Vector) root.getVector("amount")).setSafe(0, 1.5f);
      ((DecimalVector) root.getVector("price")).setSafe(0, new BigDecimal("123456.78"));
      ((TimeStampMilliTZVector) root.getVector("ts")).setSafe(0, 1_700_000_000_123L);
      ((TimeStampSecVector) root.getVector("local")).setSafe(0, 1_700_000_000L);
      ((LargeVarCharVector) root.getVector("name")).setSafe(0, utf8("héllo"));
      ((LargeVarBinaryVector) root.getVector("payload")).setSafe(0, new byte[] {1, 2, 3});
      ((FixedSizeBinaryVector) root.getVector("code")).setSafe(0, new byte[] {9, 8, 7, 6});
      ((FixedSizeBinaryVector) root.getVector("uid")).setSafe(0, new byte[16]);
      ((DateDayVector) root.getVector("day")).setSafe(0, 19000);
      ((TimeMilliVector) root.getVector("tod")).setSafe(0, 3_600_000);
      StructVector a = (StructVector) root.getVector("addr");
      a.getChild("zip", IntVector.class).setSafe(0, 75001);
      a.getChild("street", VarCharVector.class).setSafe(0, utf8("rue"));
      a.setIndexDefined(0);
      a.setNull(1);
      UnionLargeListWriter lw = ((LargeListVector) root.getVector("tags")).getWriter();
      lw.setPosition(0);
      lw.startList();
      lw.integer().writeInt(1);
      lw.integer().writeInt(2);
      lw.endList();
      lw.setPosition(1);
      lw.startList();
      lw.integer().writeInt(3);
      lw.endList();
      UnionMapWriter mw = ((MapVector) root.getVector("attrs")).getWriter();
      mw.setPosition(0);
      mw.startMap();
      mw.startEntry();
      mw.key().varChar().writeVarChar("k");
      mw.value().float4().writeFloat4(2.5f);
      mw.endEntry();
      mw.endMap();
      for (FieldVector v : root.getFieldVectors()) {
        v.setValueCount(2);
      }
      root.setRowCount(2);

      convert(wide, WalOperation.UPSERT, root, null, out -> {
        assertThat(((BigIntVector) out.getVector("id")).get(1)).isEqualTo(-8L);
        assertThat(((IntVector) out.getVector("small")).get(0)).isEqualTo(-3);
        assertThat(out.getVector("small").isNull(1)).isTrue();
        assertThat(((Float8Vector) out.getVector("amount")).get(0)).isEqualTo(1.5);
        assertThat(((DecimalVector) out.getVector("price")).getObject(0))
            .isEqualTo(new BigDecimal("123456.78"));
        assertThat(((TimeStampMicroTZVector) out.getVector("ts")).get(0))
            .isEqualTo(1_700_000_000_123_000L);
        assertThat(((TimeStampMicroVector) out.getVector("local")).get(0))
            .isEqualTo(1_700_000_000_000_000L);
        assertThat(out.getVector("name").getObject(0).toString()).isEqualTo("héllo");
        assertThat((byte[]) out.getVector("payload").getObject(0)).containsExactly(1, 2, 3);
        assertThat((byte[]) out.getVector("code").getObject(0)).containsExactly(9, 8, 7, 6);
        assertThat(((DateDayVector) out.getVector("day")).get(0)).isEqualTo(19000);
        assertThat(((TimeMicroVector) out.getVector("tod")).get(0)).isEqualTo(3_600_000_000L);
        StructVector outAddr = (StructVector) out.getVector("addr");
        assertThat(outAddr.getChild("street").getObject(0).toString()).isEqualTo("rue");
        assertThat(((BigIntVector) outAddr.getChild("zip")).get(0)).isEqualTo(75001L);
        assertThat(outAddr.getChild("note").isNull(0)).isTrue();
        assertThat(outAddr.isNull(1)).isTrue();
        ListVector outTags = (ListVector) out.getVector("tags");
        assertThat(outTags.getObject(0).toString()).isEqualTo("[1,2]");
        assertThat(outTags.getObject(1).toString()).isEqualTo("[3]");
        MapVector outAttrs = (MapVector) out.getVector("attrs");
        assertThat(outAttrs.getObject(0).toString()).isEqualTo("[{\"key\":\"k\",\"value\":2.5}]");
        assertThat(outAttrs.isNull(1)).isTrue();
      });
    }
  }

  @Test
  void identicalTypesPassThroughAndOnlyPresentColumnsAreWritten() throws Exception {
    org.apache.arrow.vector.types.pojo.Schema schema = new org.apache.arrow.vector.types.pojo.Schema(
        List.of(field("name", ArrowType.Utf8.INSTANCE), field("id", new ArrowType.Int(64, true))));
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
      ((VarCharVector) root.getVector("name")).setSafe(0, utf8("x"));
      ((BigIntVector) root.getVector("id")).setSafe(0, 42);
      root.setRowCount(1);
      convert(wide, WalOperation.UPSERT, root, null, out -> {
        assertThat(out.getSchema().getFields()).extracting(Field::getName)
            .containsExactly("name", "id");
        assertThat(IcebergArrowSchemas.fieldId(out.getSchema().findField("id"))).isEqualTo(1);
        assertThat(IcebergArrowSchemas.fieldId(out.getSchema().findField("name"))).isEqualTo(7);
        assertThat(out.getVector("id").getObject(0)).isEqualTo(42L);
      });
    }
  }

  @Test
  void dictionaryEncodedStringViewAndUnsignedColumnsArePlain() throws Exception {
    try (VarCharVector values = new VarCharVector("dict", allocator);
        VarCharVector raw = new VarCharVector("name", allocator)) {
      values.setSafe(0, utf8("red"));
      values.setSafe(1, utf8("blue"));
      values.setValueCount(2);
      Dictionary dictionary = new Dictionary(values, new DictionaryEncoding(1L, false, null));
      raw.setSafe(0, utf8("blue"));
      raw.setNull(1);
      raw.setSafe(2, utf8("red"));
      raw.setValueCount(3);
      DictionaryProvider.MapDictionaryProvider provider = new DictionaryProvider.MapDictionaryProvider();
      provider.put(dictionary);
      try (FieldVector encoded = (FieldVector) DictionaryEncoder.encode(raw, dictionary);
          ViewVarCharVector payload = new ViewVarCharVector("code_view", allocator);
          UInt1Vector small = new UInt1Vector("small", allocator);
          BigIntVector id = new BigIntVector("id", allocator)) {
        small.setSafe(0, 200);
        small.setSafe(1, 1);
        small.setSafe(2, 2);
        small.setValueCount(3);
        for (int i = 0; i < 3; i++) {
          id.setSafe(i, i);
        }
        id.setValueCount(3);
        Field nameField = new Field("name", new FieldType(true, encoded.getField().getType(),
            dictionary.getEncoding()), null);
        List<Field> fields = List.of(id.getField(), nameField, small.getField());
        List<FieldVector> vectors = List.of(id, encoded, small);
        VectorSchemaRoot root = new VectorSchemaRoot(fields, vectors, 3);
        convert(wide, WalOperation.UPSERT, root, provider, out -> {
          VarCharVector name = (VarCharVector) out.getVector("name");
          assertThat(name.getObject(0).toString()).isEqualTo("blue");
          assertThat(name.isNull(1)).isTrue();
          assertThat(name.getObject(2).toString()).isEqualTo("red");
          assertThat(((IntVector) out.getVector("small")).get(0)).isEqualTo(200);
        });
      }
      try (ViewVarCharVector view = new ViewVarCharVector("name", allocator);
          BigIntVector id = new BigIntVector("id", allocator)) {
        view.setSafe(0, utf8("a string longer than twelve bytes"));
        view.setSafe(1, utf8("short"));
        view.setValueCount(2);
        id.setSafe(0, 1);
        id.setSafe(1, 2);
        id.setValueCount(2);
        VectorSchemaRoot root = new VectorSchemaRoot(List.of(id.getField(), view.getField()),
            List.of(id, view), 2);
        convert(wide, WalOperation.UPSERT, root, null, out -> {
          assertThat(out.getVector("name").getObject(0).toString())
              .isEqualTo("a string longer than twelve bytes");
          assertThat(out.getVector("name").getObject(1).toString()).isEqualTo("short");
        });
      }
    }
  }

  @Test
  void incompatibleSchemasAreRejectedNamingTheColumnAndTheReason() {
    assertThat(planError(wide, WalOperation.UPSERT, ID64, field("price", ArrowType.Utf8.INSTANCE)))
        .hasMessage("column `price`: expected decimal(10,2), got utf8");
    assertThat(planError(wide, WalOperation.UPSERT, ID64,
        field("price", new ArrowType.Decimal(10, 3, 128))))
        .hasMessage("column `price`: expected decimal(10,2), got decimal(10,3)");
    assertThat(planError(wide, WalOperation.UPSERT, ID64,
        field("price", new ArrowType.Decimal(12, 2, 128))))
        .hasMessage("column `price`: expected decimal(10,2), got decimal(12,2)");
    assertThat(planError(wide, WalOperation.UPSERT, ID64,
        field("ts", new ArrowType.Timestamp(TimeUnit.MICROSECOND, null))))
        .hasMessage("column `ts`: expected timestamptz, got timestamp[us] (a timestamp without "
            + "time zone cannot be stored in a timestamptz column)");
    assertThat(planError(wide, WalOperation.UPSERT, ID64,
        field("local", new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC"))))
        .hasMessage("column `local`: expected timestamp, got timestamp[us, tz=UTC] (a timestamp "
            + "with time zone cannot be stored in a timestamp column)");
    assertThat(planError(wide, WalOperation.UPSERT, ID64,
        field("ts", new ArrowType.Timestamp(TimeUnit.NANOSECOND, "UTC"))))
        .hasMessageStartingWith("column `ts`: expected timestamptz, got timestamp[ns, tz=UTC]");
    assertThat(planError(wide, WalOperation.UPSERT, field("id", new ArrowType.Int(64, false))))
        .hasMessage("column `id`: expected long, got uint64");
    assertThat(planError(wide, WalOperation.UPSERT, ID64,
        field("small", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE))))
        .hasMessage("column `small`: expected int, got float64");
    assertThat(planError(wide, WalOperation.UPSERT, ID64,
        field("code", new ArrowType.FixedSizeBinary(5))))
        .hasMessage("column `code`: expected fixed[4], got fixed_size_binary(5)");
    assertThat(planError(wide, WalOperation.UPSERT, ID64,
        field("uid", ArrowType.Binary.INSTANCE)))
        .hasMessage("column `uid`: expected uuid, got binary");
    assertThat(planError(wide, WalOperation.UPSERT, ID64, field("colour", ArrowType.Utf8.INSTANCE)))
        .hasMessage("column `colour`: not a column of table `tenant.sales.wide`");
    assertThat(planError(wide, WalOperation.UPSERT, ID64, ID64))
        .hasMessage("column `id`: appears twice in the batch schema");
    assertThat(planError(wide, WalOperation.UPSERT, field("name", ArrowType.Utf8.INSTANCE)))
        .hasMessage("column `id`: required column missing from the batch");
    assertThat(planError(wide, WalOperation.UPSERT, ID64, field("addr", ArrowType.Struct.INSTANCE,
        field("street", ArrowType.Utf8.INSTANCE), field("country", ArrowType.Utf8.INSTANCE))))
        .hasMessage("column `addr.country`: not a field of the table's struct");
    assertThat(planError(wide, WalOperation.UPSERT, ID64, field("addr", ArrowType.Struct.INSTANCE,
        field("zip", new ArrowType.Int(64, true)))))
        .hasMessage("column `addr.street`: required field missing");
    assertThat(planError(wide, WalOperation.UPSERT, ID64, field("tags", ArrowType.List.INSTANCE,
        field("element", ArrowType.Utf8.INSTANCE))))
        .hasMessage("column `tags.element`: expected long, got utf8");
    assertThat(planError(wide, WalOperation.UPSERT, ID64, field("tags", ArrowType.Utf8.INSTANCE)))
        .hasMessage("column `tags`: expected list, got utf8");
  }

  @Test
  void nullsInRequiredColumnsAndNestedFieldsAreRejectedPerBatch() {
    Field addr = field("addr", ArrowType.Struct.INSTANCE, field("street", ArrowType.Utf8.INSTANCE));
    Field tags = field("tags", ArrowType.List.INSTANCE, field("element", new ArrowType.Int(64, true)));
    org.apache.arrow.vector.types.pojo.Schema schema =
        new org.apache.arrow.vector.types.pojo.Schema(List.of(ID64, addr, tags));
    BatchValidator validator =
        BatchValidator.forStream(target(wide, WalOperation.UPSERT), schema, null);
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
      root.allocateNew();
      BigIntVector id = (BigIntVector) root.getVector("id");
      StructVector a = (StructVector) root.getVector("addr");
      VarCharVector street = a.getChild("street", VarCharVector.class);
      id.setSafe(0, 1);
      id.setSafe(1, 2);
      a.setNull(0); // a null struct may have a null required field
      street.setNull(0);
      a.setIndexDefined(1);
      street.setSafe(1, utf8("main"));
      ListVector t = (ListVector) root.getVector("tags");
      t.setNull(0);
      t.setNull(1);
      for (FieldVector v : root.getFieldVectors()) {
        v.setValueCount(2);
      }
      root.setRowCount(2);
      assertThat(validator.convert(root, null, allocator)).isNotEmpty();

      street.setNull(1);
      street.setValueCount(2);
      assertThatThrownBy(() -> validator.convert(root, null, allocator))
          .hasMessage("column `addr.street`: null at row 1 in a required field");
      street.setSafe(1, utf8("main"));

      var w = t.getWriter();
      w.setPosition(1);
      w.startList();
      w.bigInt().writeNull();
      w.endList();
      t.setValueCount(2);
      assertThatThrownBy(() -> validator.convert(root, null, allocator))
          .hasMessage("column `tags.element`: null at row 0 in a required field");

      id.setNull(0);
      assertThatThrownBy(() -> validator.convert(root, null, allocator))
          .hasMessage("column `id`: null at row 0 in a required column");
    }
  }

  @Test
  void entityUpsertsNeedKeyAndVersionAndMayBePartial() throws Exception {
    Field version = field("version", new ArrowType.Int(64, true));
    Field name = field("name", ArrowType.Utf8.INSTANCE);
    assertThat(planError(people, WalOperation.UPSERT, version, name))
        .hasMessage("column `id`: primary-key column missing from the batch");
    assertThat(planError(people, WalOperation.UPSERT, ID64, name))
        .hasMessage("column `version`: version column missing from the batch");

    // Partial upsert: the required `age` may be omitted, it keeps its stored value.
    org.apache.arrow.vector.types.pojo.Schema partial =
        new org.apache.arrow.vector.types.pojo.Schema(List.of(ID64, version, name));
    try (VectorSchemaRoot root = VectorSchemaRoot.create(partial, allocator)) {
      ((BigIntVector) root.getVector("id")).setSafe(0, 5);
      ((BigIntVector) root.getVector("version")).setSafe(0, 2);
      ((VarCharVector) root.getVector("name")).setNull(0);
      root.setRowCount(1);
      convert(people, WalOperation.UPSERT, root, null, out -> {
        assertThat(out.getSchema().getFields()).extracting(Field::getName)
            .containsExactly("id", "version", "name");
        assertThat(out.getVector("name").isNull(0)).isTrue();
      });
      root.getVector("version").setNull(0);
      BatchValidator validator =
          BatchValidator.forStream(target(people, WalOperation.UPSERT), partial, null);
      assertThatThrownBy(() -> validator.convert(root, null, allocator))
          .hasMessage("column `version`: null at row 0 in a version column");
    }
  }

  @Test
  void entityDeletesCarryOnlyKeyAndVersion() throws Exception {
    Field version = field("version", new ArrowType.Int(64, true));
    assertThat(planError(people, WalOperation.DELETE, ID64, version,
        field("name", ArrowType.Utf8.INSTANCE)))
        .hasMessage("column `name`: a delete carries only the primary-key and version columns");
    assertThat(planError(people, WalOperation.DELETE, ID64))
        .hasMessage("column `version`: version column missing from the batch");
    org.apache.arrow.vector.types.pojo.Schema schema =
        new org.apache.arrow.vector.types.pojo.Schema(List.of(field("id", new ArrowType.Int(32, true)), version));
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
      ((IntVector) root.getVector("id")).setSafe(0, 5);
      ((BigIntVector) root.getVector("version")).setSafe(0, 3);
      root.setRowCount(1);
      convert(people, WalOperation.DELETE, root, null, out -> {
        assertThat(out.getVector("id").getObject(0)).isEqualTo(5L);
        assertThat(IcebergArrowSchemas.fieldId(out.getSchema().findField("version"))).isEqualTo(4);
      });
      root.getVector("id").setNull(0);
      BatchValidator validator =
          BatchValidator.forStream(target(people, WalOperation.DELETE), schema, null);
      assertThatThrownBy(() -> validator.convert(root, null, allocator))
          .hasMessage("column `id`: null at row 0 in a primary-key column");
    }
  }

  @Test
  void misconfiguredEntityTablesAreRejected() {
    Table noKey = catalog.buildTable(TableIdentifier.of("sales", "nokey"), WIDE)
        .withProperty(TableProperties.MODE, TableProperties.MODE_ENTITY).create();
    assertThatThrownBy(() -> target(noKey, WalOperation.UPSERT))
        .hasMessage("table tenant.sales.nokey: an entity table needs a primary key "
            + "(the schema's identifier fields), and this one has none");
    Table badVersion = catalog.buildTable(TableIdentifier.of("sales", "badversion"), PEOPLE)
        .withProperties(Map.of(TableProperties.MODE, TableProperties.MODE_ENTITY,
            TableProperties.VERSION_COLUMN, "rev")).create();
    assertThatThrownBy(() -> target(badVersion, WalOperation.UPSERT))
        .hasMessage("table tenant.sales.badversion: se.version-column 'rev' is not a "
            + "top-level column of the table");
    Table badMode = catalog.buildTable(TableIdentifier.of("sales", "badmode"), PEOPLE)
        .withProperty(TableProperties.MODE, "ledger").create();
    assertThatThrownBy(() -> target(badMode, WalOperation.UPSERT))
        .hasMessage("table tenant.sales.badmode: se.mode 'ledger' is not append or entity");
    // Mixed case is the same entity table to ingestion as to everything else.
    Table mixedCase = catalog.buildTable(TableIdentifier.of("sales", "mixedcase"), PEOPLE)
        .withProperties(Map.of(TableProperties.MODE, "Entity", TableProperties.VERSION_COLUMN, "version"))
        .create();
    IngestTarget mixed = target(mixedCase, WalOperation.UPSERT);
    assertThat(mixed.entity()).isTrue();
    assertThat(mixed.versionColumn()).isEqualTo("version");
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
