package io.storageengine.query;

import io.storageengine.common.SeException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The names a query may use, read from the checked-in resource {@value #RESOURCE}: functions
 * (scalar, aggregate and window functions, operators as DuckDB names them, pure macros), table
 * functions and type names. A name not listed is refused, so functions a newer DuckDB adds stay
 * refused until someone adds them here (a test compares the list with {@code duckdb_functions()}).
 *
 * <p>Names are matched after ASCII lower-casing only, as DuckDB folds the case of catalog names:
 * a name with other letters never matches (DuckDB would not find it either).
 */
final class SqlAllowList {
  static final String RESOURCE = "sql-allow-list.txt";
  private static final SqlAllowList INSTANCE = load();

  private final Set<String> functions;
  private final Set<String> tableFunctions;
  private final Set<String> types;

  private SqlAllowList(Set<String> functions, Set<String> tableFunctions, Set<String> types) {
    this.functions = Set.copyOf(functions);
    this.tableFunctions = Set.copyOf(tableFunctions);
    this.types = Set.copyOf(types);
  }

  static SqlAllowList get() {
    return INSTANCE;
  }

  /** Whether {@code name} may be called in an expression (scalar, aggregate, window, operator, macro). */
  boolean function(String name) {
    return functions.contains(fold(name));
  }

  /** Whether {@code name} may be used in FROM as a table function. */
  boolean tableFunction(String name) {
    return tableFunctions.contains(fold(name));
  }

  /** Whether {@code name} may be used as a type (casts, literals such as {@code DATE '...'}). */
  boolean type(String name) {
    return types.contains(fold(name));
  }

  Set<String> functions() {
    return functions;
  }

  Set<String> tableFunctions() {
    return tableFunctions;
  }

  Set<String> types() {
    return types;
  }

  /** {@code name} with ASCII letters lower-cased, as DuckDB compares catalog names. */
  static String fold(String name) {
    StringBuilder out = new StringBuilder(name.length());
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      out.append(c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c);
    }
    return out.toString();
  }

  private static SqlAllowList load() {
    Map<String, Set<String>> sections = new LinkedHashMap<>();
    sections.put("functions", new TreeSet<>());
    sections.put("table_functions", new TreeSet<>());
    sections.put("types", new TreeSet<>());
    try (InputStream in = SqlAllowList.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw SeException.internal("query allow-list " + RESOURCE + " is missing from the classpath", null);
      }
      BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      Set<String> current = null;
      String line;
      int number = 0;
      while ((line = reader.readLine()) != null) {
        number++;
        String text = line.strip();
        if (text.isEmpty() || text.startsWith("#")) {
          continue;
        }
        if (text.startsWith("[") && text.endsWith("]")) {
          current = sections.get(text.substring(1, text.length() - 1));
          if (current == null) {
            throw SeException.internal("query allow-list line " + number + ": unknown section " + text, null);
          }
          continue;
        }
        if (current == null || !text.equals(fold(text))) {
          throw SeException.internal("query allow-list line " + number + ": `" + text
              + "` must be lower-case and inside a section", null);
        }
        current.add(text);
      }
    } catch (IOException e) {
      throw SeException.internal("cannot read the query allow-list", e);
    }
    return new SqlAllowList(sections.get("functions"), sections.get("table_functions"), sections.get("types"));
  }
}
