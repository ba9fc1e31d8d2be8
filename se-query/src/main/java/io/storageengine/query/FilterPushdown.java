package io.storageengine.query;

import io.storageengine.duckdb.SqlQuoting;
import io.storageengine.query.StatementAnalyzer.Comparison;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.expressions.Binder;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Turns the predicates the analyzer found on one table ({@link StatementAnalyzer.Comparison}:
 * {@code column op literal} or {@code column op ?} AND-ed at the top of a WHERE over that table)
 * into the Iceberg {@link Expression} its files are pruned with.
 *
 * <p>Pushdown only prunes: DuckDB still evaluates the whole WHERE on every row read, so the
 * expression must never exclude a file holding a row the query returns, and may keep files it
 * could skip. Hence a comparison is pushed only when it means exactly the same to Iceberg's
 * metrics as to DuckDB: a top-level column of the schema (found ignoring case, as DuckDB does),
 * one of {@code = < <= > >=} or {@code IN}, and literals of the column's own kind (an integer for
 * an int or long column, a string for a string or date column; every value of an {@code IN}
 * list). Anything else (other types, casts, {@code IS NULL}, {@code OR}, {@code NOT}, functions,
 * nested fields, parameters bound to other kinds or not bound) is left to DuckDB: it contributes
 * {@code alwaysTrue}.
 */
final class FilterPushdown {
  private FilterPushdown() {}

  /**
   * The conjunction of the comparisons that can prune {@code schema}'s files, {@code alwaysTrue}
   * when none can; a comparison with a parameter uses the value bound in {@code parameters}.
   */
  static Expression filter(Schema schema, List<Comparison> comparisons, QueryParameters parameters) {
    Expression result = Expressions.alwaysTrue();
    Types.StructType struct = schema.asStruct();
    for (Comparison written : comparisons) {
      Comparison comparison = resolve(written, parameters);
      if (comparison == null) {
        continue;
      }
      Types.NestedField field = schema.caseInsensitiveFindField(comparison.column());
      if (field == null || schema.findField(field.fieldId()) == null || !schema.columns().contains(field)) {
        continue;
      }
      Expression expression = StatementAnalyzer.IN.equals(comparison.operator())
          ? in(struct, field, comparison, parameters) : compare(field, comparison);
      if (expression == null) {
        continue;
      }
      try {
        Binder.bind(struct, expression, true);
        result = Expressions.and(result, expression);
      } catch (RuntimeException e) {
        // Not prunable (type mismatch); DuckDB still applies the predicate.
      }
    }
    return result;
  }

  /**
   * A DuckDB predicate over the entity table's key columns {@code keys} that every row the
   * statement reads of the table satisfies, from its comparisons (as {@link #filter} takes them),
   * or null when there is none: each key column must be compared {@code =} with a literal of its
   * own kind (an integer for an int or long key, a string for a string key; a bound parameter
   * counts as its value), or be in an {@code IN} list of such values only. The predicate compares
   * the same columns with the same literals in DuckDB, as the statement's WHERE does, so it
   * selects every key of the rows that WHERE can keep; the table's WAL tail then needs folding
   * for those keys alone.
   */
  static KeyFilter keyFilter(Schema schema, List<Types.NestedField> keys, List<Comparison> comparisons,
      QueryParameters parameters) {
    if (keys.isEmpty()) {
      return null;
    }
    List<String> terms = new ArrayList<>();
    long selected = 1;
    for (Types.NestedField key : keys) {
      boolean found = false;
      long columnValues = Long.MAX_VALUE; // the fewest values a comparison of this column allows
      for (Comparison comparison : comparisons) {
        Types.NestedField field = schema.caseInsensitiveFindField(comparison.column());
        if (field == null || field.fieldId() != key.fieldId() || !schema.columns().contains(field)) {
          continue;
        }
        String term = null;
        if (StatementAnalyzer.IN.equals(comparison.operator())) {
          List<String> values = new ArrayList<>();
          for (Comparison value : comparison.anyOf()) {
            String literal = keyLiteral(field, resolve(value, parameters));
            if (literal == null) {
              values = null; // a value of another kind: the list selects no fewer keys than it says
              break;
            }
            values.add(literal);
          }
          term = values == null ? null : SqlQuoting.identifier(field.name()) + " IN (" + String.join(", ", values) + ")";
          if (values != null) {
            columnValues = Math.min(columnValues, values.size());
          }
        } else if ("COMPARE_EQUAL".equals(comparison.operator())) {
          String literal = keyLiteral(field, resolve(comparison, parameters));
          term = literal == null ? null : SqlQuoting.identifier(field.name()) + " = " + literal;
          if (literal != null) {
            columnValues = 1;
          }
        }
        if (term != null) {
          terms.add(term);
          found = true;
        }
      }
      if (!found) {
        return null;
      }
      selected = columnValues > Long.MAX_VALUE / Math.max(1, selected) ? Long.MAX_VALUE : selected * columnValues;
    }
    return new KeyFilter(String.join(" AND ", terms), selected);
  }

  /**
   * A key filter ({@link #keyFilter}): the DuckDB predicate, and the most keys it can select (the
   * product over the key columns of the fewest values one of its comparisons allows).
   */
  record KeyFilter(String sql, long keys) {}

  /** The SQL literal of a key comparison's value, or null when its kind is not the key's (or it is null). */
  private static String keyLiteral(Types.NestedField field, Comparison comparison) {
    if (comparison == null) {
      return null;
    }
    Object value = literal(field, comparison);
    if (value instanceof Integer || value instanceof Long) {
      return value.toString();
    }
    if (value instanceof String text && field.type().typeId() == Type.TypeID.STRING) {
      return SqlQuoting.literal(text);
    }
    return null;
  }

  /** {@code column op literal} for Iceberg, or null when the operator or the literal's kind does not prune. */
  private static Expression compare(Types.NestedField field, Comparison comparison) {
    Object value = literal(field, comparison);
    if (value == null) {
      return null;
    }
    switch (comparison.operator()) {
      case "COMPARE_EQUAL": return Expressions.equal(field.name(), value);
      case "COMPARE_LESSTHAN": return Expressions.lessThan(field.name(), value);
      case "COMPARE_LESSTHANOREQUALTO": return Expressions.lessThanOrEqual(field.name(), value);
      case "COMPARE_GREATERTHAN": return Expressions.greaterThan(field.name(), value);
      case "COMPARE_GREATERTHANOREQUALTO": return Expressions.greaterThanOrEqual(field.name(), value);
      default: return null;
    }
  }

  /**
   * {@code column IN (values)} for Iceberg, or null unless every value is a literal of the
   * column's kind that Iceberg converts to the column's type ({@code = value} binds; a date
   * DuckDB reads and Iceberg does not, such as {@code '2024-1-3'}, keeps the list in DuckDB):
   * pruning by some of the values would drop the files of the others.
   */
  private static Expression in(Types.StructType struct, Types.NestedField field, Comparison in,
      QueryParameters parameters) {
    List<Object> values = new ArrayList<>();
    for (Comparison written : in.anyOf()) {
      Comparison value = resolve(written, parameters);
      Object literal = value == null ? null : literal(field, value);
      if (literal == null) {
        return null;
      }
      try {
        Binder.bind(struct, Expressions.equal(field.name(), literal), true);
      } catch (RuntimeException e) {
        return null;
      }
      values.add(literal);
    }
    return values.isEmpty() ? null : Expressions.in(field.name(), values.toArray());
  }

  /** {@code comparison} with a parameter replaced by its bound value as a literal, or null when it cannot prune. */
  private static Comparison resolve(Comparison comparison, QueryParameters parameters) {
    if (!StatementAnalyzer.PARAMETER.equals(comparison.literalKind())) {
      return comparison;
    }
    QueryParameters.Value value = parameters.parameter(comparison.literalText());
    if (value == null) {
      return null;
    }
    switch (value.kind()) {
      case INTEGER:
        return new Comparison(comparison.column(), comparison.operator(), "INTEGER", value.text());
      case STRING:
      case DATE:
        return new Comparison(comparison.column(), comparison.operator(), "STRING", value.text());
      default:
        return null;
    }
  }

  /** Only types whose comparison semantics match DuckDB's exactly are pushed down. */
  private static Object literal(Types.NestedField field, Comparison comparison) {
    String kind = comparison.literalKind();
    String text = comparison.literalText();
    try {
      switch (field.type().typeId()) {
        case INTEGER:
          return "INTEGER".equals(kind) ? Integer.valueOf(text) : null;
        case LONG:
          return "INTEGER".equals(kind) ? Long.valueOf(text) : null;
        case STRING:
        case DATE:
          return "STRING".equals(kind) ? text : null;
        default:
          return null;
      }
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
