package io.storageengine.stress.bench;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * Compares two query results row by row. Values are normalised by the readers ({@link Long} for
 * every integer type, {@link BigDecimal} for decimals, {@link Double} for floating point,
 * {@link java.time.LocalDate} for dates, {@link String} for text, null for SQL NULL); decimals
 * must be equal exactly (by value, so {@code 1.50} equals {@code 1.5}), doubles within a relative
 * {@code tolerance}, everything else by {@link Object#equals}. {@code ordered}: rows are compared
 * position by position (the query has an ORDER BY); otherwise both sides are sorted first.
 *
 * <p>Across engines with other result types ({@code acrossTypes}, e.g. Spark against the engine:
 * Spark's {@code avg} of a decimal is a decimal where DuckDB's is a double, its {@code sum} of
 * integers a {@code bigint} where DuckDB's is a 128-bit integer) numbers of different classes
 * compare by value: integers and decimals exactly, a double and a decimal within the relative
 * tolerance or within one unit in the decimal's last place (the decimal is rounded to its scale,
 * the double is not). Without it a number of another class is a difference.
 */
final class ResultDiff {
  private ResultDiff() {}

  /** Empty when equal, else a description of the first difference. */
  static String compare(List<List<Object>> expected, List<List<Object>> actual, boolean ordered, double tolerance) {
    return compare(expected, actual, ordered, tolerance, false);
  }

  /** Empty when equal, else a description of the first difference; see the class for {@code acrossTypes}. */
  static String compare(List<List<Object>> expected, List<List<Object>> actual, boolean ordered, double tolerance,
      boolean acrossTypes) {
    if (expected.size() != actual.size()) {
      return "row count " + actual.size() + " vs " + expected.size();
    }
    List<List<Object>> left = ordered ? expected : sorted(expected, acrossTypes);
    List<List<Object>> right = ordered ? actual : sorted(actual, acrossTypes);
    for (int r = 0; r < left.size(); r++) {
      List<Object> a = left.get(r);
      List<Object> b = right.get(r);
      if (a.size() != b.size()) {
        return "row " + r + ": " + b.size() + " columns vs " + a.size();
      }
      for (int c = 0; c < a.size(); c++) {
        if (!same(a.get(c), b.get(c), tolerance, acrossTypes)) {
          return "row " + r + " column " + c + ": " + b.get(c) + " vs " + a.get(c);
        }
      }
    }
    return "";
  }

  static boolean same(Object a, Object b, double tolerance) {
    return same(a, b, tolerance, false);
  }

  static boolean same(Object a, Object b, double tolerance, boolean acrossTypes) {
    if (a == null || b == null) {
      return a == b;
    }
    if (acrossTypes && a instanceof Number x && b instanceof Number y && a.getClass() != b.getClass()) {
      boolean xDouble = x instanceof Double;
      boolean yDouble = y instanceof Double;
      if (!xDouble && !yDouble) {
        return decimal(x).compareTo(decimal(y)) == 0;
      }
      if (xDouble != yDouble) {
        BigDecimal exact = decimal(xDouble ? y : x);
        double approximate = (xDouble ? x : y).doubleValue();
        if (same(exact.doubleValue(), approximate, tolerance, false)) {
          return true;
        }
        BigDecimal unit = BigDecimal.ONE.movePointLeft(Math.max(exact.scale(), 0));
        return Double.isFinite(approximate)
            && new BigDecimal(approximate).subtract(exact).abs().compareTo(unit) <= 0;
      }
    }
    if (a instanceof BigDecimal x && b instanceof BigDecimal y) {
      return x.compareTo(y) == 0;
    }
    if (a instanceof Double || b instanceof Double) {
      if (!(a instanceof Number x) || !(b instanceof Number y)) {
        return false;
      }
      double dx = x.doubleValue();
      double dy = y.doubleValue();
      if (dx == dy) {
        return true;
      }
      return Math.abs(dx - dy) <= tolerance * Math.max(Math.abs(dx), Math.abs(dy));
    }
    return Objects.equals(a, b);
  }

  private static BigDecimal decimal(Number n) {
    return n instanceof BigDecimal d ? d : n instanceof Double || n instanceof Float
        ? new BigDecimal(n.doubleValue()) : BigDecimal.valueOf(n.longValue());
  }

  /**
   * Sorted by a key that rounds doubles, so values within the tolerance sort alike; {@code
   * acrossTypes}: every number's key is its rounded double, so a decimal sorts like a double.
   */
  private static List<List<Object>> sorted(List<List<Object>> rows, boolean acrossTypes) {
    List<List<Object>> copy = new ArrayList<>(rows);
    copy.sort(Comparator.comparing(row -> sortKey(row, acrossTypes)));
    return copy;
  }

  private static String sortKey(List<Object> row, boolean acrossTypes) {
    StringBuilder key = new StringBuilder();
    for (Object v : row) {
      if (acrossTypes && v instanceof Number n) {
        key.append(String.format("%.6e", n.doubleValue()));
      } else if (v instanceof Double d) {
        key.append(String.format("%.6e", d));
      } else if (v instanceof BigDecimal d) {
        key.append(d.stripTrailingZeros().toPlainString());
      } else {
        key.append(v);
      }
      key.append('\u0001');
    }
    return key.toString();
  }
}
