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
 */
final class ResultDiff {
  private ResultDiff() {}

  /** Empty when equal, else a description of the first difference. */
  static String compare(List<List<Object>> expected, List<List<Object>> actual, boolean ordered, double tolerance) {
    if (expected.size() != actual.size()) {
      return "row count " + actual.size() + " vs " + expected.size();
    }
    List<List<Object>> left = ordered ? expected : sorted(expected);
    List<List<Object>> right = ordered ? actual : sorted(actual);
    for (int r = 0; r < left.size(); r++) {
      List<Object> a = left.get(r);
      List<Object> b = right.get(r);
      if (a.size() != b.size()) {
        return "row " + r + ": " + b.size() + " columns vs " + a.size();
      }
      for (int c = 0; c < a.size(); c++) {
        if (!same(a.get(c), b.get(c), tolerance)) {
          return "row " + r + " column " + c + ": " + b.get(c) + " vs " + a.get(c);
        }
      }
    }
    return "";
  }

  static boolean same(Object a, Object b, double tolerance) {
    if (a == null || b == null) {
      return a == b;
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

  /** Sorted by a key that rounds doubles, so values within the tolerance sort alike. */
  private static List<List<Object>> sorted(List<List<Object>> rows) {
    List<List<Object>> copy = new ArrayList<>(rows);
    copy.sort(Comparator.comparing(ResultDiff::sortKey));
    return copy;
  }

  private static String sortKey(List<Object> row) {
    StringBuilder key = new StringBuilder();
    for (Object v : row) {
      if (v instanceof Double d) {
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
