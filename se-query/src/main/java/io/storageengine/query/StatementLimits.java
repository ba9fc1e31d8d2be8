package io.storageengine.query;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;

/**
 * The size and nesting limits of a statement ({@link QueryLimits#maxStatementBytes},
 * {@link QueryLimits#maxStatementDepth}), checked on its text before anything parses it, so a huge
 * or deeply nested statement costs a scan of its text and no parser memory. The nesting of the
 * parse tree DuckDB returns is bounded too ({@link #maxTreeDepth}): an operator chain without
 * parentheses ({@code 1+1+...}) nests as deeply. Errors are INVALID_ARGUMENT naming the limit and
 * its setting.
 */
final class StatementLimits {
  /**
   * JSON levels of DuckDB's parse tree allowed per level of parentheses: an expression is an
   * object holding a list of children, a subquery a few more levels.
   */
  static final int TREE_LEVELS_PER_DEPTH = 4;
  /** JSON levels of the tree around the outermost expression (statement, node, select list). */
  static final int TREE_BASE_LEVELS = 32;
  private static final String DUCKDB_DEPTH_ERROR = "Max expression depth limit of";

  private final long maxBytes;
  private final int maxDepth;

  private final ObjectMapper treeReader;

  StatementLimits(long maxBytes, int maxDepth) {
    this.maxBytes = maxBytes;
    this.maxDepth = maxDepth;
    this.treeReader = Json.strict(new ObjectMapper(JsonFactory.builder()
        .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(maxTreeDepth()).build())
        .build()));
  }

  /** A JSON reader that refuses documents nested more deeply than {@link #maxTreeDepth}. */
  ObjectMapper treeReader() {
    return treeReader;
  }

  static StatementLimits of(QueryLimits limits) {
    return new StatementLimits(limits.maxStatementBytes(), limits.maxStatementDepth());
  }

  /**
   * Checks the size of {@code sql} (its UTF-8 bytes) and the nesting of its parentheses outside
   * string literals, quoted identifiers and comments.
   */
  void check(String sql) {
    long bytes = sql.length() * 3L <= maxBytes ? sql.length() : utf8Length(sql);
    if (bytes > maxBytes) {
      throw SeException.invalid("statement is %d bytes, more than the server allows (%d bytes, "
          + "--query.max-statement-size): send smaller statements, e.g. a long IN list as a join with a table",
          bytes, maxBytes);
    }
    int depth = 0;
    int n = sql.length();
    for (int i = 0; i < n; i++) {
      char c = sql.charAt(i);
      if (c == '\'' || c == '"') {
        i = skipQuoted(sql, i, c);
      } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
        int end = sql.indexOf('\n', i);
        i = end < 0 ? n : end;
      } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
        int end = sql.indexOf("*/", i + 2);
        i = end < 0 ? n : end + 1;
      } else if (c == '(' || c == '[' || c == '{') {
        if (++depth > maxDepth) {
          throw tooDeep();
        }
      } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
        depth--;
      }
    }
  }

  /** The deepest JSON nesting of a parse tree a statement within the limits may have. */
  int maxTreeDepth() {
    return TREE_BASE_LEVELS + TREE_LEVELS_PER_DEPTH * maxDepth;
  }

  /** The error of a parse tree deeper than {@link #maxTreeDepth}. */
  SeException treeTooDeep() {
    return SeException.invalid("statement nests expressions more deeply than the server allows "
        + "(--query.max-statement-depth %d): write long chains of operators as a list, "
        + "e.g. x IN (...) or list_sum([...])", maxDepth);
  }

  /**
   * The error to report for DuckDB's message {@code message} when DuckDB refused the statement's
   * expression depth, else null. DuckDB's own text advises a setting queries may not change.
   */
  SeException depthError(String message) {
    if (message == null || !message.contains(DUCKDB_DEPTH_ERROR)) {
      return null;
    }
    return treeTooDeep();
  }

  private SeException tooDeep() {
    return SeException.invalid("statement nests parentheses more than %d levels deep, more than the server allows "
        + "(--query.max-statement-depth)", maxDepth);
  }

  private static int skipQuoted(String sql, int start, char quote) {
    int i = start + 1;
    while (i < sql.length()) {
      if (sql.charAt(i) == quote) {
        if (i + 1 < sql.length() && sql.charAt(i + 1) == quote) {
          i += 2;
          continue;
        }
        return i;
      }
      i++;
    }
    return sql.length();
  }

  private static long utf8Length(String sql) {
    long bytes = 0;
    for (int i = 0; i < sql.length(); i++) {
      char c = sql.charAt(i);
      if (c < 0x80) {
        bytes++;
      } else if (c < 0x800) {
        bytes += 2;
      } else if (Character.isHighSurrogate(c)) {
        bytes += 4;
        i++;
      } else {
        bytes += 3;
      }
    }
    return bytes;
  }
}
