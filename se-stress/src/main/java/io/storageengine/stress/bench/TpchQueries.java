package io.storageengine.stress.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The 22 TPC-H queries with the substitution parameters of the specification's validation run,
 * as the {@code io.trino.tpch} generator ships them (resources {@code io/trino/tpch/queries/qN.sql}),
 * made one statement each for DuckDB: Q15's view becomes a {@code WITH} clause. Table names are
 * bare ({@code lineitem}); {@link #qualify} rewrites them for a query through the engine.
 *
 * <p>Spark SQL runs the same texts but one: its parser has no {@code DECIMAL '0.06'} typed
 * literal (Q6), which {@link #forSpark} writes as the plain literal {@code 0.06}, a decimal in
 * Spark too. Everything else (date literals, {@code INTERVAL '3' MONTH} arithmetic on dates,
 * {@code extract(YEAR FROM ...)}, {@code substr}, {@code date('1994-01-01')}, Q13's derived
 * column list) Spark 4 parses as written.
 */
final class TpchQueries {
  static final Set<String> TABLES = Set.of("lineitem", "orders", "customer", "part", "partsupp", "supplier",
      "nation", "region");
  private static final Pattern DECIMAL_LITERAL = Pattern.compile("(?i)\\bdecimal\\s+'([-+]?[0-9]*\\.?[0-9]+)'");
  private static final Pattern VIEW = Pattern.compile(
      "(?is)CREATE\\s+OR\\s+REPLACE\\s+VIEW\\s+(\\w+)\\s+AS\\s+(.*?);\\s*(SELECT.*?);?\\s*$");

  /** One query: its name ({@code q1}..{@code q22}), its text, and whether it ends in ORDER BY. */
  record Query(String name, String sql, boolean ordered) {}

  private TpchQueries() {}

  static List<Query> all() {
    List<Query> queries = new ArrayList<>();
    for (int i = 1; i <= 22; i++) {
      String sql = statement(resource("io/trino/tpch/queries/q" + i + ".sql"));
      queries.add(new Query("q" + i, sql, topLevelOrderBy(sql)));
    }
    return queries;
  }

  /** Drops comment lines and a trailing semicolon; a view and the query using it become one WITH query. */
  static String statement(String text) {
    StringBuilder body = new StringBuilder();
    for (String line : text.split("\n")) {
      if (!line.trim().startsWith("--")) {
        body.append(line).append('\n');
      }
    }
    String sql = body.toString().trim();
    Matcher view = VIEW.matcher(sql);
    if (view.matches()) {
      sql = "WITH " + view.group(1) + " AS (\n" + view.group(2).trim() + "\n)\n" + view.group(3).trim();
    }
    return sql.endsWith(";") ? sql.substring(0, sql.length() - 1).trim() : sql;
  }

  /**
   * Replaces every TPC-H table name in table position (right after {@code FROM} or {@code JOIN},
   * or after a comma in a FROM list) with {@code rename.apply(name)}; column aliases that happen
   * to spell a table ({@code n_name AS nation} in Q8 and Q9), string literals and quoted
   * identifiers stay as they are.
   */
  static String qualify(String sql, UnaryOperator<String> rename) {
    StringBuilder out = new StringBuilder();
    java.util.ArrayDeque<Boolean> inFrom = new java.util.ArrayDeque<>();
    inFrom.push(false);
    boolean expectTable = false;
    int i = 0;
    while (i < sql.length()) {
      char c = sql.charAt(i);
      if (c == '\'' || c == '"') {
        int end = sql.indexOf(c, i + 1);
        end = end < 0 ? sql.length() : end + 1;
        out.append(sql, i, end);
        i = end;
        expectTable = false;
      } else if (Character.isLetter(c) || c == '_') {
        int end = i;
        while (end < sql.length() && (Character.isLetterOrDigit(sql.charAt(end)) || sql.charAt(end) == '_')) {
          end++;
        }
        String word = sql.substring(i, end);
        String upper = word.toUpperCase(java.util.Locale.ROOT);
        boolean table = expectTable && TABLES.contains(word);
        out.append(table ? rename.apply(word) : word);
        expectTable = false;
        switch (upper) {
          case "FROM" -> {
            inFrom.pop();
            inFrom.push(true);
            expectTable = true;
          }
          case "JOIN" -> expectTable = true;
          case "WHERE", "GROUP", "ORDER", "HAVING", "LIMIT", "SELECT", "ON", "UNION" -> {
            inFrom.pop();
            inFrom.push(false);
          }
          default -> { }
        }
        i = end;
      } else {
        if (c == '(') {
          inFrom.push(false);
        } else if (c == ')' && inFrom.size() > 1) {
          inFrom.pop();
        } else if (c == ',' && inFrom.peek()) {
          expectTable = true;
        }
        out.append(c);
        i++;
      }
    }
    return out.toString();
  }

  /** The query for Spark SQL: {@code DECIMAL 'n'} typed literals become the decimal literal {@code n}. */
  static String forSpark(String sql) {
    return DECIMAL_LITERAL.matcher(sql).replaceAll("$1");
  }

  /** True when the statement ends in an ORDER BY outside every parenthesis. */
  static boolean topLevelOrderBy(String sql) {
    int depth = 0;
    String upper = sql.toUpperCase(java.util.Locale.ROOT);
    for (int i = 0; i < upper.length(); i++) {
      char c = upper.charAt(i);
      if (c == '(') {
        depth++;
      } else if (c == ')') {
        depth--;
      } else if (depth == 0 && upper.startsWith("ORDER", i)
          && upper.substring(i + 5).stripLeading().startsWith("BY")) {
        return true;
      }
    }
    return false;
  }

  private static String resource(String name) {
    try (InputStream in = TpchQueries.class.getClassLoader().getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("resource " + name + " not on the class path (io.trino.tpch:tpch)");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
