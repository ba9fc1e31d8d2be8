package io.storageengine.catalog;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;

/**
 * Values of Iceberg's {@code geometry} and {@code geography} columns: ISO well-known binary
 * (WKB), the form the Iceberg spec stores them in. {@link #checkWkb} validates a WKB value
 * (either byte order; the seven OGC geometry types with XY, Z, M or ZM coordinates, the ISO codes
 * 1-7, 1001-1007, 2001-2007 and 3001-3007; nothing after the value) and {@link #wktToWkb} turns
 * well-known text into little-endian ISO WKB ({@code POINT EMPTY} as NaN coordinates, the WKB
 * convention). {@link #checkGeographyWkb} also checks that every coordinate is a longitude and
 * latitude within [-180, 180] and [-90, 90], the bounds the spec sets for a geography's CRS. All
 * throw {@link IllegalArgumentException} describing the first problem.
 */
public final class GeoValues {
  private static final String[] TYPES = {
    null, "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION"};
  /** Nesting limit of geometry collections, so a hostile value cannot exhaust the stack. */
  private static final int MAX_DEPTH = 64;

  private GeoValues() {}

  /** Throws when {@code wkb} is not exactly one well-formed ISO WKB geometry. */
  public static void checkWkb(byte[] wkb) {
    check(wkb, false);
  }

  /**
   * Throws when {@code wkb} is not exactly one well-formed ISO WKB geometry whose coordinates are
   * longitudes (x) in [-180, 180] and latitudes (y) in [-90, 90]; NaN (an empty point) is allowed.
   */
  public static void checkGeographyWkb(byte[] wkb) {
    check(wkb, true);
  }

  private static void check(byte[] wkb, boolean lonLat) {
    ByteBuffer in = ByteBuffer.wrap(wkb);
    geometry(in, 0, -1, 0, lonLat);
    if (in.hasRemaining()) {
      throw new IllegalArgumentException(in.remaining() + " bytes after the end of the WKB geometry");
    }
  }

  /**
   * Reads one geometry; {@code onlyType} is the type a multi geometry's parts must have (0 for
   * any), {@code dims} the coordinate dimension code they must share (-1 for any); with
   * {@code lonLat} its coordinates must be longitudes and latitudes.
   */
  private static void geometry(ByteBuffer in, int onlyType, int dims, int depth, boolean lonLat) {
    if (depth > MAX_DEPTH) {
      throw new IllegalArgumentException("geometry collections nested deeper than " + MAX_DEPTH);
    }
    int at = in.position();
    need(in, 5, "a WKB header");
    byte order = in.get();
    if (order != 0 && order != 1) {
      throw new IllegalArgumentException("byte order " + order + " at offset " + at + " (expected 0 or 1)");
    }
    in.order(order == 1 ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN);
    int code = in.getInt();
    int type = code % 1000;
    int dimension = code / 1000;
    if (code < 0 || type < 1 || type > 7 || dimension > 3) {
      throw new IllegalArgumentException("geometry type code " + Integer.toUnsignedString(code) + " at offset " + at
          + " (expected ISO WKB 1-7, plus 1000 for Z, 2000 for M, 3000 for ZM)");
    }
    if (onlyType != 0 && type != onlyType) {
      throw new IllegalArgumentException("a " + TYPES[type] + " inside a multi geometry of " + TYPES[onlyType]
          + " parts at offset " + at);
    }
    if (dims >= 0 && dimension != dims) {
      throw new IllegalArgumentException("mixed coordinate dimensions at offset " + at);
    }
    int ordinates = dimension == 0 ? 2 : dimension == 3 ? 4 : 3;
    switch (type) {
      case 1 -> coordinates(in, 1, ordinates, lonLat);
      case 2 -> coordinates(in, count(in, "points"), ordinates, lonLat);
      case 3 -> {
        int rings = count(in, "rings");
        for (int i = 0; i < rings; i++) {
          coordinates(in, count(in, "points"), ordinates, lonLat);
        }
      }
      default -> {
        int parts = count(in, "parts");
        int partType = type == 7 ? 0 : type - 3;
        for (int i = 0; i < parts; i++) {
          geometry(in, partType, dimension, depth + 1, lonLat);
        }
      }
    }
  }

  private static int count(ByteBuffer in, String what) {
    need(in, 4, "a count of " + what);
    int n = in.getInt();
    if (n < 0 || n > in.remaining()) {
      throw new IllegalArgumentException("count of " + what + " " + Integer.toUnsignedString(n)
          + " at offset " + (in.position() - 4) + " exceeds the value");
    }
    return n;
  }

  private static void coordinates(ByteBuffer in, int points, int ordinates, boolean lonLat) {
    long bytes = (long) points * ordinates * 8;
    need(in, bytes, points + " coordinates");
    if (!lonLat) {
      in.position(in.position() + (int) bytes);
      return;
    }
    for (int i = 0; i < points; i++) {
      int at = in.position();
      double x = in.getDouble();
      double y = in.getDouble();
      if (Math.abs(x) > 180) {
        throw new IllegalArgumentException("longitude " + x + " at offset " + at + " is outside [-180, 180]");
      }
      if (Math.abs(y) > 90) {
        throw new IllegalArgumentException("latitude " + y + " at offset " + (at + 8) + " is outside [-90, 90]");
      }
      in.position(in.position() + (ordinates - 2) * 8);
    }
  }

  private static void need(ByteBuffer in, long bytes, String what) {
    if (in.remaining() < bytes) {
      throw new IllegalArgumentException("the WKB value ends at offset " + in.limit() + " inside " + what);
    }
  }

  /** The little-endian ISO WKB of one well-known-text geometry. */
  public static byte[] wktToWkb(String wkt) {
    WktReader reader = new WktReader(wkt);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    reader.geometry(out, 0);
    reader.skipSpace();
    if (reader.pos < wkt.length()) {
      throw reader.error("text after the end of the geometry");
    }
    return out.toByteArray();
  }

  private static final class WktReader {
    private final String text;
    private int pos;

    WktReader(String text) {
      this.text = text;
    }

    IllegalArgumentException error(String problem) {
      return new IllegalArgumentException("invalid WKT at offset " + pos + ": " + problem);
    }

    void skipSpace() {
      while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
        pos++;
      }
    }

    String word() {
      skipSpace();
      int start = pos;
      while (pos < text.length() && Character.isLetter(text.charAt(pos))) {
        pos++;
      }
      return text.substring(start, pos).toUpperCase(Locale.ROOT);
    }

    boolean acceptEmpty() {
      int mark = pos;
      if (word().equals("EMPTY")) {
        return true;
      }
      pos = mark;
      return false;
    }

    boolean accept(char c) {
      skipSpace();
      if (pos < text.length() && text.charAt(pos) == c) {
        pos++;
        return true;
      }
      return false;
    }

    void expect(char c) {
      if (!accept(c)) {
        throw error(pos < text.length() ? "expected '" + c + "', found '" + text.charAt(pos) + "'"
            : "expected '" + c + "' before the end of the text");
      }
    }

    /** Reads {@code TYPE [Z|M|ZM] (...)} or {@code TYPE [Z|M|ZM] EMPTY}. */
    void geometry(ByteArrayOutputStream out, int depth) {
      if (depth > MAX_DEPTH) {
        throw error("geometry collections nested deeper than " + MAX_DEPTH);
      }
      int at = pos;
      String name = word();
      int type = -1;
      for (int i = 1; i < TYPES.length; i++) {
        if (TYPES[i].equals(name)) {
          type = i;
        }
      }
      if (type < 0) {
        pos = at;
        throw error(name.isEmpty() ? "expected a geometry type" : "unknown geometry type '" + name + "'");
      }
      int mark = pos;
      String modifier = word();
      int dimension;
      switch (modifier) {
        case "Z" -> dimension = 1;
        case "M" -> dimension = 2;
        case "ZM" -> dimension = 3;
        case "EMPTY", "" -> {
          dimension = 0;
          pos = mark;
        }
        default -> throw error("unexpected '" + modifier + "' after " + name);
      }
      header(out, type, dimension);
      boolean empty = acceptEmpty();
      switch (type) {
        case 1 -> {
          if (empty) {
            point(out, dimension, null);
          } else {
            expect('(');
            point(out, dimension, this);
            expect(')');
          }
        }
        case 2 -> points(out, dimension, empty);
        case 3 -> rings(out, dimension, empty);
        case 4 -> parts(out, empty, () -> {
          header(out, 1, dimension);
          // MULTIPOINT ((1 2), (3 4)) and MULTIPOINT (1 2, 3 4) are both in use.
          boolean wrapped = accept('(');
          point(out, dimension, this);
          if (wrapped) {
            expect(')');
          }
        });
        case 5 -> parts(out, empty, () -> {
          header(out, 2, dimension);
          points(out, dimension, acceptEmpty());
        });
        case 6 -> parts(out, empty, () -> {
          header(out, 3, dimension);
          rings(out, dimension, acceptEmpty());
        });
        default -> parts(out, empty, () -> geometry(out, depth + 1));
      }
    }

    private void points(ByteArrayOutputStream out, int dimension, boolean empty) {
      ByteArrayOutputStream coords = new ByteArrayOutputStream();
      int n = 0;
      if (!empty) {
        expect('(');
        do {
          point(coords, dimension, this);
          n++;
        } while (accept(','));
        expect(')');
      }
      writeInt(out, n);
      out.writeBytes(coords.toByteArray());
    }

    private void rings(ByteArrayOutputStream out, int dimension, boolean empty) {
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      int n = 0;
      if (!empty) {
        expect('(');
        do {
          points(body, dimension, false);
          n++;
        } while (accept(','));
        expect(')');
      }
      writeInt(out, n);
      out.writeBytes(body.toByteArray());
    }

    private void parts(ByteArrayOutputStream out, boolean empty, Runnable part) {
      // The count precedes the parts: written as 0, patched once they are read.
      int countAt = out.size();
      writeInt(out, 0);
      int n = 0;
      if (!empty) {
        expect('(');
        do {
          part.run();
          n++;
        } while (accept(','));
        expect(')');
      }
      byte[] all = out.toByteArray();
      ByteBuffer.wrap(all, countAt, 4).order(ByteOrder.LITTLE_ENDIAN).putInt(n);
      out.reset();
      out.writeBytes(all);
    }

    /** One point's ordinates from {@code reader}, or NaN ones when it is null (an empty point). */
    private static void point(ByteArrayOutputStream out, int dimension, WktReader reader) {
      int ordinates = dimension == 0 ? 2 : dimension == 3 ? 4 : 3;
      for (int i = 0; i < ordinates; i++) {
        writeDouble(out, reader == null ? Double.NaN : reader.number());
      }
    }

    private double number() {
      skipSpace();
      int start = pos;
      while (pos < text.length() && "+-.0123456789eE".indexOf(text.charAt(pos)) >= 0) {
        pos++;
      }
      String number = text.substring(start, pos);
      try {
        double value = Double.parseDouble(number);
        if (!Double.isFinite(value)) {
          throw new NumberFormatException();
        }
        return value;
      } catch (NumberFormatException e) {
        pos = start;
        throw error(number.isEmpty() ? "expected a coordinate" : "invalid coordinate '" + number + "'");
      }
    }
  }

  private static void header(ByteArrayOutputStream out, int type, int dimension) {
    out.write(1);
    writeInt(out, dimension * 1000 + type);
  }

  private static void writeInt(ByteArrayOutputStream out, int value) {
    out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(value).array());
  }

  private static void writeDouble(ByteArrayOutputStream out, double value) {
    out.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putDouble(value).array());
  }
}
