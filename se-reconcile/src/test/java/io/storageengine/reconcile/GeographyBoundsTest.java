package io.storageengine.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.storageengine.catalog.GeoValues;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.iceberg.geospatial.GeospatialBound;
import org.apache.iceberg.types.EdgeAlgorithm;
import org.junit.jupiter.api.Test;

/**
 * Geography bounding boxes against arcs whose extremes are known: great-circle latitude maxima
 * between the vertices (atan(tan(lat) / cos(half the longitude step)) for two vertices at one
 * latitude), boxes across the antimeridian ({@code xmin > xmax}), arcs over a pole, rings around
 * a pole, and the widening for ellipsoidal edges.
 */
class GeographyBoundsTest {
  private static GeographyBounds box(EdgeAlgorithm algorithm, String... wkt) {
    GeographyBounds box = new GeographyBounds(algorithm);
    for (String w : wkt) {
      box.add(ByteBuffer.wrap(GeoValues.wktToWkb(w)));
    }
    return box;
  }

  private static GeographyBounds spherical(String... wkt) {
    return box(EdgeAlgorithm.SPHERICAL, wkt);
  }

  @Test
  void anArcAcrossTheAntimeridianRisesAboveItsVertices() {
    GeographyBounds box = spherical("LINESTRING (-170 60, 170 60)");
    assertThat(box.lower().x()).isEqualTo(170);
    assertThat(box.upper().x()).isEqualTo(-170);
    assertThat(box.lower().y()).isEqualTo(60);
    // The great circle's top lies at longitude 180, between the vertices.
    assertThat(box.upper().y()).isCloseTo(60.378348124804496, within(1e-6)).isGreaterThanOrEqualTo(60.378348124804496);
    // The same arc in the southern hemisphere sinks below it.
    GeographyBounds south = spherical("LINESTRING (170 -60, -170 -60)");
    assertThat(south.lower().y()).isCloseTo(-60.378348124804496, within(1e-6))
        .isLessThanOrEqualTo(-60.378348124804496);
    assertThat(south.upper().y()).isEqualTo(-60);
    assertThat(List.of(south.lower().x(), south.upper().x())).containsExactly(170.0, -170.0);
  }

  @Test
  void arcsWhoseExtremeIsOutsideTheirVerticesKeepTheVertices() {
    // Along the equator, and a meridian: the latitudes are the vertices'.
    GeographyBounds equator = spherical("LINESTRING (0 0, 90 0)");
    assertThat(equator.lower()).isEqualTo(GeospatialBound.createXY(0, 0));
    assertThat(equator.upper()).isEqualTo(GeospatialBound.createXY(90, 0));
    GeographyBounds rising = spherical("LINESTRING (10 10, 20 30)");
    assertThat(rising.lower()).isEqualTo(GeospatialBound.createXY(10, 10));
    assertThat(rising.upper()).isEqualTo(GeospatialBound.createXY(20, 30));
    // Two vertices at 80 degrees, 90 of longitude apart: the top (82.89) lies between them.
    GeographyBounds high = spherical("LINESTRING (0 80, 90 80)");
    assertThat(high.upper().y()).isCloseTo(82.89292388955346, within(1e-6));
    assertThat(high.lower()).isEqualTo(GeospatialBound.createXY(0, 80));
  }

  @Test
  void pointsTakeTheShortestLongitudeRange() {
    GeographyBounds points = spherical("MULTIPOINT ((170 10), (-170 20))");
    assertThat(points.lower()).isEqualTo(GeospatialBound.createXY(170, 10));
    assertThat(points.upper()).isEqualTo(GeospatialBound.createXY(-170, 20));
    GeographyBounds plain = spherical("POINT (-10 5)", "POINT (30 -7)");
    assertThat(plain.lower()).isEqualTo(GeospatialBound.createXY(-10, -7));
    assertThat(plain.upper()).isEqualTo(GeospatialBound.createXY(30, 5));
    // z and m are the vertices' ranges; empty values add nothing.
    GeographyBounds zm = spherical("POINT ZM (1 2 3 4)", "POINT ZM (5 6 -7 8)", "POINT EMPTY");
    assertThat(zm.lower()).isEqualTo(GeospatialBound.createXYZM(1, 2, -7, 4));
    assertThat(zm.upper()).isEqualTo(GeospatialBound.createXYZM(5, 6, 3, 8));
    assertThat(spherical("POINT EMPTY").isEmpty()).isTrue();
  }

  @Test
  void anArcBetweenOppositeMeridiansPassesOverThePole() {
    GeographyBounds box = spherical("LINESTRING (0 10, 180 20)");
    assertThat(box.upper().y()).isEqualTo(90);
    assertThat(box.lower().y()).isEqualTo(10);
    GeographyBounds south = spherical("LINESTRING (-90 -10, 90 -20)");
    assertThat(south.lower().y()).isEqualTo(-90);
    assertThat(south.upper().y()).isEqualTo(-10);
  }

  @Test
  void aRingAroundAPoleEnclosesIt() {
    GeographyBounds cap = spherical("POLYGON ((0 80, 90 80, 180 80, -90 80, 0 80))");
    assertThat(cap.lower()).isEqualTo(GeospatialBound.createXY(-180, 80));
    assertThat(cap.upper()).isEqualTo(GeospatialBound.createXY(180, 90));
    GeographyBounds southCap = spherical("POLYGON ((0 -70, -120 -70, 120 -70, 0 -70))");
    assertThat(southCap.lower().y()).isEqualTo(-90);
    assertThat(southCap.upper().y()).isEqualTo(-70);
    // A ring that does not wind around a pole keeps its own box.
    GeographyBounds square = spherical("POLYGON ((170 -5, -170 -5, -170 5, 170 5, 170 -5))");
    assertThat(List.of(square.lower().x(), square.upper().x())).containsExactly(170.0, -170.0);
    assertThat(square.upper().y()).isGreaterThan(5).isLessThan(5.1);
  }

  @Test
  void ellipsoidalEdgesAreWidenedAndNearlyAntipodalOnesCoverTheGlobe() {
    GeographyBounds box = box(EdgeAlgorithm.KARNEY, "LINESTRING (-170 60, 170 60)", "POINT (0 -5)");
    assertThat(box.upper().y()).isCloseTo(60.378348124804496 + GeographyBounds.ELLIPSOID_MARGIN, within(1e-6));
    assertThat(box.lower().y()).isEqualTo(-5);
    GeographyBounds wide = box(EdgeAlgorithm.VINCENTY, "LINESTRING (0 10, 179.5 -10)");
    assertThat(wide.lower()).isEqualTo(GeospatialBound.createXY(-180, -90));
    assertThat(wide.upper()).isEqualTo(GeospatialBound.createXY(180, 90));
  }
}
