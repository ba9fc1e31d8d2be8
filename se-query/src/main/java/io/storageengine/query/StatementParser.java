package io.storageengine.query;

import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.common.LruMap;
import io.storageengine.common.SeException;
import io.storageengine.query.StatementAnalyzer.Analysis;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.duckdb.DuckDBConnection;

/**
 * Parses one statement with DuckDB ({@code json_serialize_sql}) on a database of its own that
 * only parses (no file access, no extension loading, settings locked), and analyzes it
 * ({@link StatementAnalyzer}, {@link ResultColumns#select}). The analyses of the last
 * {@link #MAX_ANALYSES} statement texts (each at most {@link #MAX_ANALYZED_LENGTH} characters)
 * are remembered, so a repeated statement is parsed once; statements that fail to parse or are
 * refused are not remembered. Statements beyond the {@link StatementLimits} are refused before
 * DuckDB parses them, and a parse tree nested more deeply than they allow is refused naming them.
 * Safe for concurrent use.
 */
final class StatementParser implements AutoCloseable {
  static final int MAX_ANALYSES = 512;
  static final int MAX_ANALYZED_LENGTH = 16_384;

  private static final StatementLimits DEFAULT_LIMITS = StatementLimits.of(QueryLimits.defaults());

  private final DuckDBConnection parser;
  private final StatementLimits limits;
  private final Map<String, Analyzed> analyses = new LruMap<>(MAX_ANALYSES);

  /** A statement's analysis and its select list (see {@link ResultColumns#select}). */
  record Analyzed(Analysis analysis, ResultColumns.Select select) {}

  StatementParser() {
    this(DEFAULT_LIMITS);
  }

  StatementParser(StatementLimits limits) {
    this.limits = limits;
    this.parser = openParser();
  }

  /**
   * What {@code statement} (one statement, already {@link SqlText#rewrite rewritten}) references;
   * parse errors and refused statements are INVALID_ARGUMENT (see {@link #parse(Connection, String)}).
   */
  Analyzed analyze(String statement) throws SQLException {
    synchronized (analyses) {
      Analyzed known = analyses.get(statement);
      if (known != null) {
        return known;
      }
    }
    limits.check(statement);
    JsonNode tree;
    // A connection per parse: DuckDB connections are not shared between threads.
    try (Connection connection = parser.duplicate()) {
      tree = parse(connection, statement, limits);
    }
    Analysis result = StatementAnalyzer.analyze(tree);
    Analyzed analysis = new Analyzed(result, ResultColumns.select(tree, result.tables()));
    if (statement.length() <= MAX_ANALYZED_LENGTH) {
      synchronized (analyses) {
        analyses.put(statement, analysis);
      }
    }
    return analysis;
  }

  /**
   * DuckDB's parse tree of {@code statement}, which must be exactly one statement. Parse errors
   * are INVALID_ARGUMENT naming DuckDB's error (scrubbed, see {@link DuckDbErrors#scrub}); a
   * statement DuckDB does not serialize (anything but a query) is refused as
   * {@link StatementAnalyzer#refusedStatement} says; several statements are INVALID_ARGUMENT.
   */
  static JsonNode parse(Connection connection, String statement) throws SQLException {
    return parse(connection, statement, DEFAULT_LIMITS);
  }

  /**
   * As {@link #parse(Connection, String)}, refusing a parse tree deeper than {@code limits} allow
   * and DuckDB's own expression depth error, each naming the server's limit.
   */
  static JsonNode parse(Connection connection, String statement, StatementLimits limits) throws SQLException {
    String json;
    try (PreparedStatement ps = connection.prepareStatement("SELECT json_serialize_sql(?)")) {
      ps.setString(1, statement);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        json = rs.getString(1);
      }
    }
    JsonNode tree = readTree(json, limits);
    if (tree.path("error").asBoolean(false)) {
      String type = tree.path("error_type").asText();
      if ("not implemented".equals(type)) {
        throw StatementAnalyzer.refusedStatement(statement);
      }
      SeException depth = limits.depthError(tree.path("error_message").asText());
      if (depth != null) {
        throw depth;
      }
      throw SeException.invalid("SQL %s error: %s", type, DuckDbErrors.scrub(tree.path("error_message").asText()));
    }
    JsonNode parsed = tree.path("statements");
    if (parsed.size() != 1) {
      throw SeException.invalid("multiple statements are not allowed (found %d): send one query per call", parsed.size());
    }
    return parsed.get(0);
  }

  /** DuckDB's JSON parse tree, refused when nested more deeply than {@code limits} allow. */
  private static JsonNode readTree(String json, StatementLimits limits) {
    try {
      return limits.treeReader().readTree(json);
    } catch (java.io.IOException e) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t instanceof StreamConstraintsException) {
          throw limits.treeTooDeep();
        }
      }
      // DuckDB's own serialization: not the caller's input.
      throw SeException.internal("cannot read the parse tree of a statement", e);
    }
  }

  /** The SQL keywords of the dialect (DuckDB's reserved and unreserved keywords), upper case, sorted. */
  List<String> keywords() {
    List<String> keywords = new ArrayList<>();
    try (Connection connection = parser.duplicate();
        Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery("SELECT upper(keyword_name) FROM duckdb_keywords() ORDER BY 1")) {
      while (rows.next()) {
        keywords.add(rows.getString(1));
      }
    } catch (SQLException e) {
      throw SeException.internal("cannot list the SQL keywords", e);
    }
    return List.copyOf(keywords);
  }

  /** A DuckDB database that only parses: no file access, settings locked. */
  private static DuckDBConnection openParser() {
    Properties properties = new Properties();
    properties.setProperty("autoload_known_extensions", "false");
    properties.setProperty("autoinstall_known_extensions", "false");
    properties.setProperty("allow_community_extensions", "false");
    try {
      DuckDBConnection connection = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:", properties);
      execute(connection, "SET threads = 1");
      execute(connection, "SET enable_external_access = false");
      execute(connection, "SET lock_configuration = true");
      return connection;
    } catch (SQLException e) {
      throw SeException.internal("cannot start the query engine", e);
    }
  }

  private static void execute(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }

  /** Closes the parsing database. */
  @Override
  public void close() {
    try {
      parser.close();
    } catch (SQLException ignored) {
      // Shutting down; the parser holds no data.
    }
  }
}
