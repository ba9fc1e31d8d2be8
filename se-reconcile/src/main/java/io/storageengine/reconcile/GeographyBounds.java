package io.storageengine.reconcile;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.iceberg.geospatial.GeospatialBound;
import org.apache.iceberg.types.EdgeAlgorithm;

/**
 * A conservative bounding box of geography values (ISO WKB, longitude x and latitude y in
 * degrees), in the form the Iceberg spec gives geography bounds: {@code xmin > xmax} when the
 * box crosses the antimeridian. Every value's points and the paths of its edges lie inside the
 * box:
 *
 * <ul>
 *   <li>An edge is the shorter great-circle arc between its vertices ({@code spherical}). Its
 *       latitude range is its vertices' widened by the arc's highest and lowest points where they
 *       lie between the vertices (an arc from (-170, 60) to (170, 60) rises to 60.38 degrees);
 *       its longitudes run the shorter way from one vertex to the other (an arc between
 *       longitudes 180 degrees apart passes over a pole and has just the two longitudes; an
 *       edge to a pole has its other vertex's longitude).
 *   <li>For the ellipsoidal algorithms ({@code vincenty}, {@code thomas}, {@code andoyer},
 *       {@code karney}) an edge is a geodesic on the ellipsoid. With Earth's flattening of
 *       1/298 a geodesic's latitude stays within a small fraction of a degree of the great
 *       circle's through the same vertices, so each edge's spherical latitude range is widened
 *       by one degree; an edge whose vertices are 179 degrees of longitude apart or more (where
 *       the geodesic can leave the great circle far behind) makes the box the whole globe.
 *   <li>A polygon ring that winds once around a pole (its longitude steps add up to 360
 *       degrees) encloses that pole: the box takes every longitude and reaches the pole. Which
 *       pole: the one on the side of the ring's mean latitude (the smaller of the two regions
 *       the ring divides the sphere into; the spec leaves ring orientation open).
 *   <li>The longitude range is the shortest arc of the circle of longitudes holding every
 *       point's and edge's longitudes; z and m are the vertices' ranges (they are linear along
 *       an edge).
 * </ul>
 *
 * <p>Computed latitudes are widened by {@link #MARGIN} degrees against rounding, and clamped to
 * [-90, 90]. Empty values (no coordinates, or NaN ones) add nothing.
 */
final class GeographyBounds {
  /** Degrees a computed (non-vertex) latitude is widened by against floating-point rounding. */
  static final double MARGIN = 1e-7;
  /** Degrees an ellipsoidal edge's latitude range is widened by (see the class comment). */
  static final double ELLIPSOID_MARGIN = 1.0;
  private static final int MAX_DEPTH = 64;
  private static final int COMPACT_AT = 4096;

  private final boolean spherical;
  /** Longitude intervals [start, end] with -180 <= start <= end <= 180 (a wrapping one is split). */
  private final List<double[]> longitudes = new ArrayList<>();
  private double latMin = Double.POSITIVE_INFINITY;
  private double latMax = Double.NEGATIVE_INFINITY;
  private double zMin = Double.POSITIVE_INFINITY;
  private double zMax = Double.NEGATIVE_INFINITY;
  private double mMin = Double.POSITIVE_INFINITY;
  private double mMax = Double.NEGATIVE_INFINITY;
  private boolean allLongitudes;

  GeographyBounds(EdgeAlgorithm algorithm) {
    this.spherical = algorithm == EdgeAlgorithm.SPHERICAL;
  }

  /** Adds one WKB value; throws {@link IllegalArgumentException} when it is not WKB. */
  void add(ByteBuffer wkb) {
    geometry(wkb.duplicate(), 0);
  }

  /** Whether any coordinate was added. */
  boolean isEmpty() {
    return latMin > latMax;
  }

  /** The lower bound {@code xmin:ymin[:zmin[:mmin]]}; only when not {@link #isEmpty()}. */
  GeospatialBound lower() {
    return bound(longitudeRange()[0], latMin, zMin, mMin);
  }

  /** The upper bound {@code xmax:ymax[:zmax[:mmax]]}; {@code xmax < xmin} when the box crosses the antimeridian. */
  GeospatialBound upper() {
    return bound(longitudeRange()[1], latMax, zMax, mMax);
  }

  private static GeospatialBound bound(double x, double y, double z, double m) {
    boolean hasZ = z != Double.POSITIVE_INFINITY && z != Double.NEGATIVE_INFINITY;
    boolean hasM = m != Double.POSITIVE_INFINITY && m != Double.NEGATIVE_INFINITY;
    if (hasZ && hasM) {
      return GeospatialBound.createXYZM(x, y, z, m);
    }
    if (hasZ) {
      return GeospatialBound.createXYZ(x, y, z);
    }
    return hasM ? GeospatialBound.createXYM(x, y, m) : GeospatialBound.createXY(x, y);
  }

  /** {xmin, xmax}: the complement of the widest gap between the longitudes covered. */
  double[] longitudeRange() {
    if (allLongitudes || longitudes.isEmpty()) {
      // Every longitude, or only poles (where longitude means nothing).
      return new double[] {-180, 180};
    }
    List<double[]> merged = merge(longitudes);
    double bestGap = (merged.get(0)[0] + 360) - merged.get(merged.size() - 1)[1];
    double[] range = {merged.get(0)[0], merged.get(merged.size() - 1)[1]};
    for (int i = 0; i + 1 < merged.size(); i++) {
      double gap = merged.get(i + 1)[0] - merged.get(i)[1];
      if (gap > bestGap) {
        bestGap = gap;
        range = new double[] {merged.get(i + 1)[0], merged.get(i)[1]};
      }
    }
    return bestGap <= 0 ? new double[] {-180, 180} : range;
  }

  private static List<double[]> merge(List<double[]> intervals) {
    List<double[]> sorted = new ArrayList<>(intervals);
    sorted.sort(Comparator.comparingDouble(i -> i[0]));
    List<double[]> merged = new ArrayList<>();
    for (double[] i : sorted) {
      double[] last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
      if (last != null && i[0] <= last[1]) {
        last[1] = Math.max(last[1], i[1]);
      } else {
        merged.add(new double[] {i[0], i[1]});
      }
    }
    return merged;
  }

  private void longitudeInterval(double start, double length) {
    if (length >= 360) {
      allLongitudes = true;
      return;
    }
    double end = start + length;
    if (end > 180) {
      longitudes.add(new double[] {start, 180});
      longitudes.add(new double[] {-180, end - 360});
    } else {
      longitudes.add(new double[] {start, end});
    }
    if (longitudes.size() > COMPACT_AT) {
      List<double[]> merged = merge(longitudes);
      longitudes.clear();
      longitudes.addAll(merged);
    }
  }

  private void latitude(double lat) {
    latMin = Math.max(-90, Math.min(latMin, lat));
    latMax = Math.min(90, Math.max(latMax, lat));
  }

  // ---- WKB ----

  private void geometry(ByteBuffer in, int depth) {
    if (depth > MAX_DEPTH) {
      throw new IllegalArgumentException("geometry collections nested deeper than " + MAX_DEPTH);
    }
    in.order(in.get() == 1 ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN);
    int code = in.getInt();
    int type = code % 1000;
    int dimension = code / 1000;
    boolean hasZ = dimension == 1 || dimension == 3;
    boolean hasM = dimension == 2 || dimension == 3;
    switch (type) {
      case 1 -> path(points(in, 1, hasZ, hasM), false);
      case 2 -> path(points(in, in.getInt(), hasZ, hasM), false);
      case 3 -> {
        int rings = in.getInt();
        for (int r = 0; r < rings; r++) {
          path(points(in, in.getInt(), hasZ, hasM), true);
        }
      }
      case 4, 5, 6, 7 -> {
        int parts = in.getInt();
        for (int p = 0; p < parts; p++) {
          geometry(in, depth + 1);
        }
      }
      default -> throw new IllegalArgumentException("geometry type code " + code);
    }
  }

  /** The points' {lon, lat} pairs (NaN ones, an empty point, left out); z and m are recorded. */
  private double[] points(ByteBuffer in, int count, boolean hasZ, boolean hasM) {
    double[] lonLat = new double[count * 2];
    int n = 0;
    for (int i = 0; i < count; i++) {
      double x = in.getDouble();
      double y = in.getDouble();
      double z = hasZ ? in.getDouble() : Double.NaN;
      double m = hasM ? in.getDouble() : Double.NaN;
      if (Double.isNaN(x) || Double.isNaN(y)) {
        continue;
      }
      lonLat[n++] = x;
      lonLat[n++] = y;
      if (!Double.isNaN(z)) {
        zMin = Math.min(zMin, z);
        zMax = Math.max(zMax, z);
      }
      if (!Double.isNaN(m)) {
        mMin = Math.min(mMin, m);
        mMax = Math.max(mMax, m);
      }
    }
    return java.util.Arrays.copyOf(lonLat, n);
  }

  /** The vertices of a point, linestring or ring ({@code ring}: closed) and the edges between them. */
  private void path(double[] lonLat, boolean ring) {
    int points = lonLat.length / 2;
    double winding = 0;
    double latSum = 0;
    for (int i = 0; i < points; i++) {
      double lon = lonLat[2 * i];
      double lat = lonLat[2 * i + 1];
      latitude(lat);
      latSum += lat;
      if (points == 1 || Math.abs(lat) < 90) {
        longitudeInterval(lon, 0);
      }
      if (i + 1 < points) {
        winding += edge(lon, lat, lonLat[2 * i + 2], lonLat[2 * i + 3]);
      }
    }
    if (ring && points > 2 && Math.abs(winding) > 180) {
      // The ring winds around a pole and so encloses it.
      allLongitudes = true;
      latitude(latSum >= 0 ? 90 : -90);
    }
  }

  /**
   * Adds the edge from (lon1, lat1) to (lon2, lat2); returns its signed longitude step (0 for an
   * edge to or from a pole), for the ring's winding.
   */
  private double edge(double lon1, double lat1, double lon2, double lat2) {
    boolean pole1 = Math.abs(lat1) >= 90;
    boolean pole2 = Math.abs(lat2) >= 90;
    double step = lon2 - lon1;
    if (step > 180) {
      step -= 360;
    } else if (step < -180) {
      step += 360;
    }
    if (!spherical && !pole1 && !pole2 && Math.abs(step) >= 179) {
      allLongitudes = true;
      latitude(-90);
      latitude(90);
      return step;
    }
    double margin = spherical ? MARGIN : ELLIPSOID_MARGIN;
    if (!spherical) {
      latitude(Math.min(lat1, lat2) - margin);
      latitude(Math.max(lat1, lat2) + margin);
    }
    if (pole1 || pole2) {
      // Along the meridian of the vertex that is not a pole (both are: any meridian).
      return 0;
    }
    double[] a = unit(lon1, lat1);
    double[] b = unit(lon2, lat2);
    double[] n = cross(a, b);
    double norm = Math.sqrt(dot(n, n));
    if (norm < 1e-12) {
      if (dot(a, b) < 0) {
        // Antipodal vertices: every great circle through them is a shortest path.
        allLongitudes = true;
        latitude(-90);
        latitude(90);
      }
      return 0;
    }
    if (Math.abs(step) >= 180) {
      // The arc runs along a meridian over a pole: just the two longitudes (added as vertices).
      latitude((lat1 + lat2 >= 0 ? 90 : -90));
      return 0;
    }
    longitudeInterval(step >= 0 ? lon1 : lon2, Math.abs(step));
    // The great circle's highest point: the pole direction projected onto its plane.
    double nz = n[2] / norm;
    double[] top = {-nz * n[0] / norm, -nz * n[1] / norm, 1 - nz * nz};
    double topNorm = Math.sqrt(dot(top, top));
    if (topNorm > 1e-15) {
      for (int sign = 1; sign >= -1; sign -= 2) {
        double[] p = {sign * top[0] / topNorm, sign * top[1] / topNorm, sign * top[2] / topNorm};
        // On the minor arc from a to b (counter-clockwise about n) when between both ends.
        if (dot(cross(a, p), n) >= -1e-12 && dot(cross(p, b), n) >= -1e-12) {
          double lat = Math.toDegrees(Math.asin(Math.max(-1, Math.min(1, p[2]))));
          latitude(lat + sign * margin);
        }
      }
    }
    return step;
  }

  private static double[] unit(double lon, double lat) {
    double phi = Math.toRadians(lat);
    double lambda = Math.toRadians(lon);
    return new double[] {Math.cos(phi) * Math.cos(lambda), Math.cos(phi) * Math.sin(lambda), Math.sin(phi)};
  }

  private static double[] cross(double[] u, double[] v) {
    return new double[] {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
  }

  private static double dot(double[] u, double[] v) {
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
  }
}
