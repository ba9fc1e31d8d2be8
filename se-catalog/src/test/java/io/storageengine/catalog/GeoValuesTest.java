package io.storageengine.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class GeoValuesTest {
  private static byte[] hex(String hex) {
    return HexFormat.of().parseHex(hex);
  }

  @Test
  void wktBecomesLittleEndianIsoWkb() {
    assertThat(GeoValues.wktToWkb("POINT(1 2)")).isEqualTo(hex("0101000000000000000000f03f0000000000000040"));
    assertThat(GeoValues.wktToWkb(" point z (1 2 3) "))
        .isEqualTo(hex("01e9030000000000000000f03f00000000000000400000000000000840"));
    assertThat(GeoValues.wktToWkb("LINESTRING (0 0, 5 7)")).isEqualTo(hex(
        "010200000002000000" + "00000000000000000000000000000000" + "00000000000014400000000000001c40"));
    // Both spellings of a multipoint give the same value.
    assertThat(GeoValues.wktToWkb("MULTIPOINT ((1 2), (3 4))")).isEqualTo(GeoValues.wktToWkb("MULTIPOINT (1 2, 3 4)"));
    assertThat(GeoValues.wktToWkb("POLYGON EMPTY")).isEqualTo(hex("010300000000000000"));
    assertThat(GeoValues.wktToWkb("POINT EMPTY"))
        .isEqualTo(hex("0101000000000000000000f87f000000000000f87f"));
  }

  @Test
  void everyGeometryTypeRoundTripsThroughTheChecker() {
    for (String wkt : new String[] {"POINT (1 2)", "POINT ZM (1 2 3 4)", "LINESTRING M (0 0 1, 1 1 2)",
        "POLYGON ((0 0, 4 0, 4 4, 0 0), (1 1, 2 1, 2 2, 1 1))", "MULTIPOINT EMPTY",
        "MULTILINESTRING ((0 0, 1 1), (2 2, 3 3))", "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), EMPTY)",
        "GEOMETRYCOLLECTION (POINT (1 2), GEOMETRYCOLLECTION (LINESTRING (0 0, 1 1)), POLYGON EMPTY)",
        "GEOMETRYCOLLECTION EMPTY"}) {
      GeoValues.checkWkb(GeoValues.wktToWkb(wkt));
    }
    // Big-endian WKB is valid too.
    GeoValues.checkWkb(hex("00000000013ff00000000000004000000000000000"));
  }

  @Test
  void badValuesAreDescribed() {
    assertThatThrownBy(() -> GeoValues.wktToWkb("POINT (1 2")).hasMessageContaining("expected ')'");
    assertThatThrownBy(() -> GeoValues.wktToWkb("CIRCLE (1 2)")).hasMessageContaining("unknown geometry type 'CIRCLE'");
    assertThatThrownBy(() -> GeoValues.wktToWkb("POINT (1 x)")).hasMessageContaining("expected a coordinate");
    assertThatThrownBy(() -> GeoValues.wktToWkb("POINT (1 2) POINT (3 4)")).hasMessageContaining("text after the end");
    assertThatThrownBy(() -> GeoValues.wktToWkb("")).hasMessageContaining("expected a geometry type");
    assertThatThrownBy(() -> GeoValues.checkWkb(hex("0102"))).hasMessageContaining("inside a WKB header");
    assertThatThrownBy(() -> GeoValues.checkWkb(hex("0201000000"))).hasMessageContaining("byte order 2");
    assertThatThrownBy(() -> GeoValues.checkWkb(hex("0109000000"))).hasMessageContaining("geometry type code 9");
    assertThatThrownBy(() -> GeoValues.checkWkb(hex("0101000000000000000000f03f")))
        .hasMessageContaining("inside 1 coordinates");
    assertThatThrownBy(() -> GeoValues.checkWkb(hex("0102000000ffffff7f"))).hasMessageContaining("exceeds the value");
    assertThatThrownBy(() -> GeoValues.checkWkb(hex("0101000000000000000000f03f000000000000004000")))
        .hasMessageContaining("1 bytes after the end");
    // A multipoint holds points only, of its own dimension.
    assertThatThrownBy(() -> GeoValues.checkWkb(hex("010400000001000000" + "010200000000000000")))
        .hasMessageContaining("a LINESTRING inside a multi geometry of POINT parts");
    assertThatThrownBy(() -> GeoValues.checkWkb(hex("01ec03000001000000" + "0101000000"
        + "000000000000f03f0000000000000040"))).hasMessageContaining("mixed coordinate dimensions");
  }

  @Test
  void geographyCoordinatesAreLongitudesAndLatitudes() {
    GeoValues.checkGeographyWkb(GeoValues.wktToWkb("LINESTRING (-180 -90, 180 90)"));
    GeoValues.checkGeographyWkb(GeoValues.wktToWkb("POINT EMPTY"));
    GeoValues.checkGeographyWkb(GeoValues.wktToWkb("POINT ZM (10 20 5000 7)"));
    // Big-endian too; the z and m ordinates are not bounded.
    GeoValues.checkGeographyWkb(hex("00000003e9" + "4024000000000000" + "4034000000000000" + "40c3880000000000"));
    assertThatThrownBy(() -> GeoValues.checkGeographyWkb(GeoValues.wktToWkb("POINT (3857000 10)")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("longitude 3857000.0 at offset 5 is outside [-180, 180]");
    assertThatThrownBy(() -> GeoValues.checkGeographyWkb(GeoValues.wktToWkb(
        "GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (0 0, 10 -91))")))
        .hasMessage("latitude -91.0 at offset 63 is outside [-90, 90]");
    // The same values are fine as a geometry.
    GeoValues.checkWkb(GeoValues.wktToWkb("POINT (3857000 10)"));
  }
}
