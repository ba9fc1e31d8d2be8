package io.storageengine.ingest;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.VariantValues;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.wal.WalOperation;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.variants.Variant;
import org.apache.iceberg.variants.VariantMetadata;
import org.apache.iceberg.variants.VariantValue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A variant column is ingested from JSON text (Arrow utf8) and from the encoded form (the
 * {@code arrow.parquet.variant} struct of metadata and value): the WAL holds the encoded form
 * with the column's field id; invalid JSON and malformed encodings are refused naming the column
 * and the row, and nothing of the refused batch reaches the WAL.
 */
class VariantIngestTest {
  static final Schema TABLE = new Schema(List.of(required(1, "id", Types.LongType.get()),
      optional(2, "doc", Types.VariantType.get())), java.util.Set.of(1));

  IngestHarness h;

  @BeforeEach
  void start() throws Exception {
    h = new IngestHarness();
  }

  @AfterEach
  void stop() throws Exception {
    h.close();
  }

  private Table table(String name) {
    return h.createTable(name, TABLE, Map.of("format-version", "3"));
  }

  private static org.apache.arrow.vector.types.pojo.Schema jsonSchema() {
    return new org.apache.arrow.vector.types.pojo.Schema(List.of(
        new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
        new Field("doc", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));
  }

  private VectorSchemaRoot jsonRows(String... docs) {
    VectorSchemaRoot root = VectorSchemaRoot.create(jsonSchema(), h.clientAllocator);
    for (int i = 0; i < docs.length; i++) {
      ((BigIntVector) root.getVector("id")).setSafe(i, i);
      if (docs[i] == null) {
        ((VarCharVector) root.getVector("doc")).setNull(i);
      } else {
        ((VarCharVector) root.getVector("doc")).setSafe(i, docs[i].getBytes(StandardCharsets.UTF_8));
      }
    }
    root.setRowCount(docs.length);
    return root;
  }

  /** The variants of the doc column of every frame of {@code table}, as Iceberg prints them. */
  private List<String> walDocs(Table table) throws Exception {
    List<String> docs = new ArrayList<>();
    for (var frame : h.frames(table)) {
      h.readFrame(frame, root -> {
        assertThat(IngestHarness.fieldId(root, "doc")).isEqualTo(2);
        Field field = root.getSchema().findField("doc");
        assertThat(IcebergArrowSchemas.isVariant(field)).isTrue();
        StructVector doc = (StructVector) root.getVector("doc");
        VarBinaryVector metadata = (VarBinaryVector) doc.getChild("metadata");
        VarBinaryVector value = (VarBinaryVector) doc.getChild("value");
        for (int row = 0; row < root.getRowCount(); row++) {
          if (doc.isNull(row)) {
            docs.add(null);
            continue;
          }
          VariantMetadata md = VariantMetadata.from(ByteBuffer.wrap(metadata.get(row)).order(ByteOrder.LITTLE_ENDIAN));
          VariantValue v = VariantValue.from(md, ByteBuffer.wrap(value.get(row)).order(ByteOrder.LITTLE_ENDIAN));
          docs.add(v.toString());
        }
      });
    }
    return docs;
  }

  @Test
  void jsonTextIsEncodedAsAVariant() throws Exception {
    Table table = table("json_docs");
    try (VectorSchemaRoot root = jsonRows("{\"a\": {\"b\": 1}, \"s\": \"x\", \"big\": 12345678901}",
            "[1, 2.5, \"q\", null, true]", null, "\"just a string\"", "-7");
        IngestStream stream = h.client.open(IngestHarness.TENANT, List.of("sales", "eu"), "json_docs",
            WalOperation.UPSERT, jsonSchema())) {
      stream.send(root).get();
      stream.finish();
    }
    List<String> docs = walDocs(table);
    assertThat(docs).hasSize(5);
    assertThat(docs.get(0)).contains("a: VariantObject(fields={b: Variant(type=INT8, value=1)})")
        .contains("big: Variant(type=INT64, value=12345678901)").contains("s: Variant(type=STRING, value=x)");
    assertThat(docs.get(1)).isEqualTo("VariantArray([Variant(type=INT8, value=1), Variant(type=DOUBLE, value=2.5), "
        + "Variant(type=STRING, value=q), Variant(type=NULL, value=null), Variant(type=BOOLEAN_TRUE, value=true)])");
    assertThat(docs.get(2)).isNull();
    assertThat(docs.get(3)).isEqualTo("Variant(type=STRING, value=just a string)");
    assertThat(docs.get(4)).isEqualTo("Variant(type=INT8, value=-7)");
  }

  @Test
  void invalidJsonIsRefusedNamingTheColumnAndRow() throws Exception {
    Table table = table("bad_json");
    for (String bad : List.of("{\"a\": ", "{\"a\": 1, \"a\": 2}", "[1] 2", "")) {
      try (VectorSchemaRoot root = jsonRows("{\"ok\": true}", "{\"ok\": 2}", bad);
          IngestStream stream = h.client.open(IngestHarness.TENANT, List.of("sales", "eu"), "bad_json",
              WalOperation.UPSERT, jsonSchema())) {
        assertThatThrownBy(() -> {
          stream.send(root).get();
          stream.finish();
        }).hasRootCauseInstanceOf(FlightRuntimeException.class)
            .rootCause().satisfies(e -> assertThat(((FlightRuntimeException) e).status().code())
                .isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
            .hasMessageContaining("column `doc`: invalid JSON at row 2");
      } catch (FlightRuntimeException e) {
        // closing the refused stream may report the same error again
        assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
      }
    }
    assertThat(h.frames(table)).isEmpty();
  }

  private static org.apache.arrow.vector.types.pojo.Schema encodedSchema() {
    return new org.apache.arrow.vector.types.pojo.Schema(List.of(
        new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
        IcebergArrowSchemas.toArrow(TABLE.findField("doc"))));
  }

  private VectorSchemaRoot encodedRows(List<VariantValues.Encoded> docs) {
    VectorSchemaRoot root = VectorSchemaRoot.create(encodedSchema(), h.clientAllocator);
    StructVector doc = (StructVector) root.getVector("doc");
    VarBinaryVector metadata = (VarBinaryVector) doc.getChild("metadata");
    VarBinaryVector value = (VarBinaryVector) doc.getChild("value");
    for (int i = 0; i < docs.size(); i++) {
      ((BigIntVector) root.getVector("id")).setSafe(i, i);
      doc.setIndexDefined(i);
      metadata.setSafe(i, docs.get(i).metadata());
      value.setSafe(i, docs.get(i).value());
    }
    metadata.setValueCount(docs.size());
    value.setValueCount(docs.size());
    root.setRowCount(docs.size());
    return root;
  }

  @Test
  void theEncodedFormIsCheckedAndStoredAsIs() throws Exception {
    Table table = table("encoded");
    VariantValues.Encoded good = VariantValues.fromJson("{\"k\": [\"v\", 3]}");
    try (VectorSchemaRoot root = encodedRows(List.of(good, VariantValues.fromJson("4.25")));
        IngestStream stream = h.client.open(IngestHarness.TENANT, List.of("sales", "eu"), "encoded",
            WalOperation.UPSERT, encodedSchema())) {
      stream.send(root).get();
      stream.finish();
    }
    assertThat(walDocs(table)).containsExactly(
        Variant.of(VariantMetadata.from(ByteBuffer.wrap(good.metadata()).order(ByteOrder.LITTLE_ENDIAN)),
            VariantValue.from(VariantMetadata.from(ByteBuffer.wrap(good.metadata()).order(ByteOrder.LITTLE_ENDIAN)),
                ByteBuffer.wrap(good.value()).order(ByteOrder.LITTLE_ENDIAN))).value().toString(),
        "Variant(type=DOUBLE, value=4.25)");

    byte[] truncated = java.util.Arrays.copyOf(good.value(), good.value().length - 1);
    byte[] badVersion = good.metadata().clone();
    badVersion[0] = (byte) ((badVersion[0] & 0xF0) | 2);
    // An object whose field id points past the dictionary: the metadata of another value.
    VariantValues.Encoded foreign = new VariantValues.Encoded(VariantValues.fromJson("1").metadata(), good.value());
    for (VariantValues.Encoded bad : List.of(new VariantValues.Encoded(good.metadata(), truncated),
        new VariantValues.Encoded(badVersion, good.value()), foreign)) {
      try (VectorSchemaRoot root = encodedRows(List.of(good, bad));
          IngestStream stream = h.client.open(IngestHarness.TENANT, List.of("sales", "eu"), "encoded",
              WalOperation.UPSERT, encodedSchema())) {
        assertThatThrownBy(() -> {
          stream.send(root).get();
          stream.finish();
        }).rootCause().hasMessageContaining("column `doc`: invalid variant at row 1");
      } catch (FlightRuntimeException e) {
        assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
      }
    }
    assertThat(h.frames(table)).hasSize(1);
  }
}
