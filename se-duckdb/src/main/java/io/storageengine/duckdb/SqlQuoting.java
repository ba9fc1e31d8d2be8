package io.storageengine.duckdb;

/** Quoting of identifiers and string literals in DuckDB SQL text. */
public final class SqlQuoting {
  private SqlQuoting() {}

  /** {@code identifier} as a quoted SQL identifier: {@code a"b} becomes {@code "a""b"}. */
  public static String identifier(String identifier) {
    return '"' + identifier.replace("\"", "\"\"") + '"';
  }

  /** {@code value} as a SQL string literal: {@code it's} becomes {@code 'it''s'}. */
  public static String literal(String value) {
    return '\'' + value.replace("'", "''") + '\'';
  }
}
