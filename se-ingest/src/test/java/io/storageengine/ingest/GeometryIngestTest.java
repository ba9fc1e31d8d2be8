package io.storageengine.ingest;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.GeoValues;
import io.storageengine.ingest.client.IngestStream;
import io.storageengine.wal.WalOperation;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VariableWidthFieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A geometry column is ingested from WKB (Arrow binary) and from WKT (Arrow utf8): the WAL holds
 * WKB (binary) with the column's field id; invalid WKB and WKT are refused naming the column and
 * the row, and nothing of the refused batch reaches the WAL. Geography columns and geometry of
 * another CRS are ingested the same way.
 */
class GeometryIngestTest {
  static final Schema TABLE = new Schema(List.of(required(1, "id", Types.LongType.get()),
      optional(2, "g", Types.GeometryType.crs84())), java.util.Set.of(1));
  static final byte[] POINT = HexFormat.of().parseHex("0101000000000000000000f03f0000000000000040");

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

  private static org.apache.arrow.vector.types.pojo.Schema schema(ArrowType g) {
    return new org.apache.arrow.vector.types.pojo.Schema(List.of(
        new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
        new Field("g", FieldType.nullable(g), null)));
  }

  private VectorSchemaRoot rows(ArrowType type, byte[]... values) {
    VectorSchemaRoot root = VectorSchemaRoot.create(schema(type), h.clientAllocator);
    VariableWidthFieldVector g = (VariableWidthFieldVector) root.getVector("g");
    g.allocateNew();
    for (int i = 0; i < values.length; i++) {
      ((BigIntVector) root.getVector("id")).setSafe(i, i);
      if (values[i] == null) {
        g.setNull(i);
      } else {
        g.setSafe(i, values[i]);
      }
    }
    root.setRowCount(values.length);
    return root;
  }

  private static byte[] text(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private void send(String name, VectorSchemaRoot root) throws Exception {
    try (root; IngestStream stream = h.client.open(IngestHarness.TENANT, List.of("sales", "eu"), name,
        WalOperation.UPSERT, root.getSchema())) {
      stream.send(root).get();
      stream.finish();
    }
  }

  /** The WKB values of the g column of every frame of {@code table}, in hex. */
  private List<String> walValues(Table table) throws Exception {
    List<String> values = new ArrayList<>();
    for (var frame : h.frames(table)) {
      h.readFrame(frame, root -> {
        assertThat(IngestHarness.fieldId(root, "g")).isEqualTo(2);
        assertThat(root.getSchema().findField("g").getType()).isEqualTo(ArrowType.Binary.INSTANCE);
        VarBinaryVector g = (VarBinaryVector) root.getVector("g");
        for (int row = 0; row < root.getRowCount(); row++) {
          values.add(g.isNull(row) ? null : HexFormat.of().formatHex(g.get(row)));
        }
      });
    }
    return values;
  }

  @Test
  void wkbIsCheckedAndKeptAndWktIsStoredAsWkb() throws Exception {
    Table table = table("places");
    byte[] bigEndian = HexFormat.of().parseHex("00000000013ff00000000000004000000000000000");
    send("places", rows(ArrowType.Binary.INSTANCE, POINT, null, bigEndian));
    send("places", rows(ArrowType.LargeBinary.INSTANCE, POINT));
    send("places", rows(ArrowType.Utf8.INSTANCE, text("POINT (1 2)"), null,
        text("LINESTRING (0 0, 5 7)")));
    send("places", rows(ArrowType.LargeUtf8.INSTANCE, text("point(1 2)")));
    String point = HexFormat.of().formatHex(POINT);
    List<String> expected = new ArrayList<>(List.of(point));
    expected.add(null);
    expected.add(HexFormat.of().formatHex(bigEndian));
    expected.add(point);
    expected.add(point);
    expected.add(null);
    expected.add(HexFormat.of().formatHex(GeoValues.wktToWkb("LINESTRING (0 0, 5 7)")));
    expected.add(point);
    assertThat(walValues(table)).containsExactlyElementsOf(expected);
  }

  @Test
  void geographyAndGeometryOfAnotherCrsAreIngestedAsWkbToo() throws Exception {
    List<org.apache.iceberg.types.Type> types = List.of(Types.GeographyType.crs84(),
        Types.GeographyType.of("srid:4326", org.apache.iceberg.types.EdgeAlgorithm.KARNEY),
        Types.GeometryType.of("srid:3857"), Types.GeometryType.of("EPSG:4326"));
    for (int i = 0; i < types.size(); i++) {
      String name = "geo" + i;
      Table table = h.createTable(name, new Schema(List.of(required(1, "id", Types.LongType.get()),
          optional(2, "g", types.get(i))), java.util.Set.of(1)), Map.of("format-version", "3"));
      send(name, rows(ArrowType.Utf8.INSTANCE, text("POINT (1 2)"), null));
      send(name, rows(ArrowType.Binary.INSTANCE, POINT));
      String point = HexFormat.of().formatHex(POINT);
      assertThat(walValues(table)).as(types.get(i).toString()).containsExactly(point, null, point);
    }
    Table bad = h.createTable("bad_geo", new Schema(List.of(required(1, "id", Types.LongType.get()),
        optional(2, "g", Types.GeographyType.crs84())), java.util.Set.of(1)), Map.of("format-version", "3"));
    refuse("bad_geo", rows(ArrowType.Utf8.INSTANCE, text("POINT (1)")), "column `g`: invalid WKT at row 0");
    // A geography's coordinates are longitudes and latitudes (a geometry's may be anything).
    refuse("bad_geo", rows(ArrowType.Utf8.INSTANCE, text("POINT (1 2)"), text("POINT (200 0)")),
        "column `g`: invalid geography WKT at row 1: longitude 200.0 at offset 5 is outside [-180, 180]");
    refuse("bad_geo", rows(ArrowType.Binary.INSTANCE, GeoValues.wktToWkb("LINESTRING (0 0, 1 95)")),
        "column `g`: invalid geography WKB at row 0: latitude 95.0 at offset 33 is outside [-90, 90]");
    assertThat(h.frames(bad)).isEmpty();
  }

  @Test
  void invalidWkbAndWktAreRefusedNamingTheColumnAndRow() throws Exception {
    Table table = table("bad_places");
    refuse(rows(ArrowType.Binary.INSTANCE, POINT, POINT, HexFormat.of().parseHex("0101000000")),
        "column `g`: invalid WKB at row 2: the WKB value ends at offset 5 inside 1 coordinates");
    refuse(rows(ArrowType.BinaryView.INSTANCE, HexFormat.of().parseHex("07"), POINT),
        "column `g`: invalid WKB at row 0");
    refuse(rows(ArrowType.Utf8.INSTANCE, text("POINT (1 2)"), text("POINT (1 2")),
        "column `g`: invalid WKT at row 1: invalid WKT at offset 10: expected ')'");
    refuse(rows(ArrowType.Utf8.INSTANCE, text("TRIANGLE ((0 0, 1 0, 0 1, 0 0))")),
        "column `g`: invalid WKT at row 0: invalid WKT at offset 0: unknown geometry type 'TRIANGLE'");
    assertThat(h.frames(table)).isEmpty();
    // Another Arrow type is a type mismatch.
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema(new ArrowType.Int(32, true)), h.clientAllocator)) {
      assertThatThrownBy(() -> h.client.open(IngestHarness.TENANT, List.of("sales", "eu"), "bad_places",
          WalOperation.UPSERT, root.getSchema()).close())
          .hasMessageContaining("column `g`: expected geometry");
    }
  }

  private void refuse(VectorSchemaRoot rows, String message) throws Exception {
    refuse("bad_places", rows, message);
  }

  private void refuse(String table, VectorSchemaRoot rows, String message) throws Exception {
    try (VectorSchemaRoot root = rows;
        IngestStream stream = h.client.open(IngestHarness.TENANT, List.of("sales", "eu"), table,
            WalOperation.UPSERT, root.getSchema())) {
      assertThatThrownBy(() -> {
        stream.send(root).get();
        stream.finish();
      }).hasRootCauseInstanceOf(FlightRuntimeException.class)
          .rootCause().satisfies(e -> assertThat(((FlightRuntimeException) e).status().code())
              .isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
          .hasMessageContaining(message);
    } catch (FlightRuntimeException e) {
      // closing the refused stream may report the same error again
      assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
    }
  }
}
