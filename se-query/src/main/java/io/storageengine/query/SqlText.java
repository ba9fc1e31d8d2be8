package io.storageengine.query;

import io.storageengine.common.SeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Lexical helpers over SQL text: statement splitting and the rewrites DuckDB needs before it
 * can parse our dialect ({@code default} as a catalog name, {@code SHOW COLUMNS}, Trino's time travel). Security does
 * not rest on this class: every statement is parsed by DuckDB afterwards and checked on its AST.
 */
final class SqlText {
  private static final Set<String> REFUSED_KEYWORDS = Set.of(
      "INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "CREATE", "DROP", "ALTER", "TRUNCATE", "COPY",
      "ATTACH", "DETACH", "INSTALL", "LOAD", "SET", "RESET", "PRAGMA", "CALL", "EXPORT", "IMPORT",
      "BEGIN", "COMMIT", "ROLLBACK", "ABORT", "START", "END", "TRANSACTION", "CHECKPOINT", "VACUUM",
      "ANALYZE", "USE", "PREPARE", "EXECUTE", "DEALLOCATE", "GRANT", "REVOKE", "COMMENT", "UPDATE_EXTENSIONS",
      "EXPLAIN");

  private SqlText() {}

  /** A lexical token: its kind, text and position in the source. */
  record Token(Kind kind, String text, int start, int end) {
    boolean isWord(String word) {
      return kind == Kind.WORD && text.equalsIgnoreCase(word);
    }
  }

  enum Kind { WORD, QUOTED_IDENTIFIER, STRING, NUMBER, SYMBOL }

  /** Tokens of {@code sql}, without whitespace and comments. Unterminated quotes are errors. */
  static List<Token> tokens(String sql) {
    List<Token> out = new ArrayList<>();
    int i = 0;
    int n = sql.length();
    while (i < n) {
      char c = sql.charAt(i);
      if (Character.isWhitespace(c)) {
        i++;
      } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
        while (i < n && sql.charAt(i) != '\n') {
          i++;
        }
      } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
        int depth = 0;
        int start = i;
        do {
          if (i + 1 < n && sql.charAt(i) == '/' && sql.charAt(i + 1) == '*') {
            depth++;
            i += 2;
          } else if (i + 1 < n && sql.charAt(i) == '*' && sql.charAt(i + 1) == '/') {
            depth--;
            i += 2;
          } else {
            i++;
          }
        } while (depth > 0 && i < n);
        if (depth > 0) {
          throw SeException.invalid("SQL: unterminated comment starting at offset %d", start);
        }
      } else if (c == '\'' || ((c == 'E' || c == 'e') && i + 1 < n && sql.charAt(i + 1) == '\'')) {
        boolean escapes = c != '\'';
        int start = i;
        i = escapes ? i + 2 : i + 1;
        while (true) {
          if (i >= n) {
            throw SeException.invalid("SQL: unterminated string starting at offset %d", start);
          }
          char d = sql.charAt(i);
          if (escapes && d == '\\') {
            i += 2;
          } else if (d == '\'' && i + 1 < n && sql.charAt(i + 1) == '\'') {
            i += 2;
          } else if (d == '\'') {
            i++;
            break;
          } else {
            i++;
          }
        }
        out.add(new Token(Kind.STRING, sql.substring(start, i), start, i));
      } else if (c == '"') {
        int start = i++;
        while (true) {
          if (i >= n) {
            throw SeException.invalid("SQL: unterminated quoted identifier starting at offset %d", start);
          }
          if (sql.charAt(i) == '"' && i + 1 < n && sql.charAt(i + 1) == '"') {
            i += 2;
          } else if (sql.charAt(i) == '"') {
            i++;
            break;
          } else {
            i++;
          }
        }
        out.add(new Token(Kind.QUOTED_IDENTIFIER, sql.substring(start, i), start, i));
      } else if (c == '$' && dollarTagEnd(sql, i) > 0) {
        int tagEnd = dollarTagEnd(sql, i);
        String tag = sql.substring(i, tagEnd);
        int close = sql.indexOf(tag, tagEnd);
        if (close < 0) {
          throw SeException.invalid("SQL: unterminated dollar-quoted string starting at offset %d", i);
        }
        out.add(new Token(Kind.STRING, sql.substring(i, close + tag.length()), i, close + tag.length()));
        i = close + tag.length();
      } else if (Character.isLetter(c) || c == '_') {
        int start = i;
        while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_' || sql.charAt(i) == '$')) {
          i++;
        }
        out.add(new Token(Kind.WORD, sql.substring(start, i), start, i));
      } else if (Character.isDigit(c)) {
        int start = i;
        while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '.')) {
          i++;
        }
        out.add(new Token(Kind.NUMBER, sql.substring(start, i), start, i));
      } else {
        out.add(new Token(Kind.SYMBOL, String.valueOf(c), i, i + 1));
        i++;
      }
    }
    return out;
  }

  /** End (exclusive) of a {@code $tag$} opener at {@code i}, or -1. */
  private static int dollarTagEnd(String sql, int i) {
    int j = i + 1;
    while (j < sql.length() && (Character.isLetterOrDigit(sql.charAt(j)) || sql.charAt(j) == '_')) {
      j++;
    }
    if (j < sql.length() && sql.charAt(j) == '$' && (j == i + 1 || !Character.isDigit(sql.charAt(i + 1)))) {
      return j + 1;
    }
    return -1;
  }

  /** The non-empty statements of {@code sql}, split at top-level semicolons, trimmed. */
  static List<String> statements(String sql) {
    List<String> out = new ArrayList<>();
    int start = 0;
    boolean hasContent = false;
    for (Token token : tokens(sql)) {
      if (token.kind() == Kind.SYMBOL && token.text().equals(";")) {
        if (hasContent) {
          out.add(sql.substring(start, token.start()).trim());
        }
        start = token.end();
        hasContent = false;
      } else {
        hasContent = true;
      }
    }
    if (hasContent) {
      out.add(sql.substring(start).trim());
    }
    return out;
  }

  /**
   * Rewrites DuckDB-unparseable parts of one statement: a bare {@code default} used as a
   * qualifier ({@code default.x}) becomes {@code "default"}, {@code SHOW COLUMNS FROM t}
   * becomes {@code DESCRIBE t}, and {@code t FOR VERSION AS OF v} becomes DuckDB's
   * {@code t AT (VERSION => v)} (see {@link TimeTravel#rewrite}).
   */
  static String rewrite(String statement) {
    List<Token> tokens = tokens(statement);
    StringBuilder out = new StringBuilder(statement.length() + 8);
    int copied = 0;
    if (tokens.size() >= 3 && tokens.get(0).isWord("SHOW") && tokens.get(1).isWord("COLUMNS")
        && (tokens.get(2).isWord("FROM") || tokens.get(2).isWord("IN"))) {
      out.append("DESCRIBE");
      copied = tokens.get(2).end();
    }
    for (int i = 0; i < tokens.size(); i++) {
      Token token = tokens.get(i);
      if (token.start() < copied) {
        continue;
      }
      boolean qualifier = i + 1 < tokens.size() && tokens.get(i + 1).text().equals(".");
      if (token.isWord("default") && qualifier) {
        out.append(statement, copied, token.start()).append("\"default\"");
        copied = token.end();
      }
    }
    out.append(statement, copied, statement.length());
    return TimeTravel.rewrite(out.toString());
  }

  /** The keyword that makes a non-query statement refused, for error messages. */
  static String refusedKeyword(String statement) {
    List<Token> tokens = tokens(statement);
    for (Token token : tokens) {
      String upper = token.text().toUpperCase(Locale.ROOT);
      if (token.kind() == Kind.WORD && REFUSED_KEYWORDS.contains(upper)) {
        return upper;
      }
    }
    return tokens.isEmpty() ? "empty statement" : tokens.get(0).text().toUpperCase(Locale.ROOT);
  }
}
