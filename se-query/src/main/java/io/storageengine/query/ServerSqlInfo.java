package io.storageengine.query;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.flight.sql.FlightSqlProducer.Schemas;
import org.apache.arrow.flight.sql.SqlInfoBuilder;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlInfo;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlNullOrdering;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlOuterJoinsSupportLevel;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlSupportedCaseSensitivity;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlSupportedGroupBy;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlSupportedResultSetType;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlSupportedSubqueries;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlSupportedTransaction;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlSupportedUnions;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlSupportsConvert;
import org.apache.arrow.flight.sql.impl.FlightSql.SupportedAnsi92SqlGrammarLevel;
import org.apache.arrow.flight.sql.impl.FlightSql.SupportedSqlGrammar;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The server's answer to Flight SQL {@code GetSqlInfo}: every standard code is answered except
 * {@link #UNANSWERED} (codes with nothing true to say), codes the server does not know are left
 * out of the answer (never an error), and an empty request answers every code.
 *
 * <p>The SQL dialect is DuckDB's, read-only: identifiers are case-insensitive (quoted ones too),
 * NULLs sort last in both directions, there are no transactions, DDL or stored procedures, and
 * no size limits beyond the server's message size.
 */
final class ServerSqlInfo {
  /**
   * Standard codes left unanswered: Substrait is not supported (so it has no version range), and
   * Arrow's SQL info writer cannot encode the result set concurrency codes (no client reads them).
   */
  static final Set<SqlInfo> UNANSWERED = EnumSet.of(
      SqlInfo.FLIGHT_SQL_SERVER_SUBSTRAIT_MIN_VERSION, SqlInfo.FLIGHT_SQL_SERVER_SUBSTRAIT_MAX_VERSION,
      SqlInfo.SQL_SUPPORTED_CONCURRENCIES_FOR_RESULT_SET_UNSPECIFIED,
      SqlInfo.SQL_SUPPORTED_CONCURRENCIES_FOR_RESULT_SET_FORWARD_ONLY,
      SqlInfo.SQL_SUPPORTED_CONCURRENCIES_FOR_RESULT_SET_SCROLL_SENSITIVE,
      SqlInfo.SQL_SUPPORTED_CONCURRENCIES_FOR_RESULT_SET_SCROLL_INSENSITIVE);

  static final String[] NUMERIC_FUNCTIONS = {"ABS", "ACOS", "ASIN", "ATAN", "ATAN2", "CBRT", "CEIL", "CEILING",
      "COS", "COT", "DEGREES", "EXP", "FLOOR", "GREATEST", "LEAST", "LN", "LOG", "LOG10", "LOG2", "MOD", "PI",
      "POW", "POWER", "RADIANS", "RANDOM", "ROUND", "SIGN", "SIN", "SQRT", "TAN", "TRUNC"};
  static final String[] STRING_FUNCTIONS = {"ASCII", "CHR", "CONCAT", "CONCAT_WS", "CONTAINS", "ENDS_WITH",
      "INSTR", "LCASE", "LEFT", "LENGTH", "LIKE_ESCAPE", "LOWER", "LPAD", "LTRIM", "MD5", "POSITION",
      "REGEXP_MATCHES", "REGEXP_REPLACE", "REPEAT", "REPLACE", "REVERSE", "RIGHT", "RPAD", "RTRIM", "SHA256",
      "SPLIT_PART", "STARTS_WITH", "STRPOS", "SUBSTR", "SUBSTRING", "TRIM", "UCASE", "UPPER"};
  static final String[] SYSTEM_FUNCTIONS = {"COALESCE", "IFNULL", "NULLIF", "TYPEOF"};
  static final String[] DATETIME_FUNCTIONS = {"AGE", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP",
      "DATE_ADD", "DATE_DIFF", "DATE_PART", "DATE_SUB", "DATE_TRUNC", "DAYNAME", "DAYOFMONTH", "DAYOFWEEK",
      "DAYOFYEAR", "EPOCH", "EPOCH_MS", "EXTRACT", "HOUR", "LAST_DAY", "MAKE_DATE", "MAKE_TIME",
      "MAKE_TIMESTAMP", "MINUTE", "MONTH", "MONTHNAME", "NOW", "QUARTER", "SECOND", "STRFTIME", "STRPTIME",
      "TO_TIMESTAMP", "WEEK", "YEAR"};

  private final SqlInfoBuilder builder;
  private final Set<Integer> answered = new java.util.HashSet<>();

  /**
   * @param version the server's version
   * @param arrowVersion the Arrow version it runs
   * @param keywords the SQL keywords of the dialect (DuckDB's)
   * @param bulkIngestion whether the host accepts Flight SQL bulk ingest
   */
  ServerSqlInfo(String serverName, String version, String arrowVersion, List<String> keywords, boolean bulkIngestion) {
    builder = new SqlInfoBuilder()
        .withFlightSqlServerName(serverName)
        .withFlightSqlServerVersion(version)
        .withFlightSqlServerArrowVersion(arrowVersion)
        .withFlightSqlServerReadOnly(true)
        .withFlightSqlServerSql(true)
        .withFlightSqlServerSubstrait(false)
        .withFlightSqlServerTransaction(SqlSupportedTransaction.SQL_SUPPORTED_TRANSACTION_NONE)
        .withFlightSqlServerCancel(true)
        .withFlightSqlServerBulkIngestion(bulkIngestion)
        .withFlightSqlServerBulkIngestionTransaction(false)
        .withFlightSqlServerStatementTimeout(0)
        .withFlightSqlServerTransactionTimeout(0)
        .withSqlDdlCatalog(false)
        .withSqlDdlSchema(false)
        .withSqlDdlTable(false)
        .withSqlIdentifierCase(SqlSupportedCaseSensitivity.SQL_CASE_SENSITIVITY_CASE_INSENSITIVE)
        .withSqlIdentifierQuoteChar("\"")
        .withSqlQuotedIdentifierCase(SqlSupportedCaseSensitivity.SQL_CASE_SENSITIVITY_CASE_INSENSITIVE)
        .withSqlAllTablesAreSelectable(true)
        .withSqlNullOrdering(SqlNullOrdering.SQL_NULLS_SORTED_AT_END)
        .withSqlKeywords(keywords.toArray(new String[0]))
        .withSqlNumericFunctions(NUMERIC_FUNCTIONS)
        .withSqlStringFunctions(STRING_FUNCTIONS)
        .withSqlSystemFunctions(SYSTEM_FUNCTIONS)
        .withSqlDatetimeFunctions(DATETIME_FUNCTIONS)
        .withSqlSearchStringEscape("\\")
        .withSqlExtraNameCharacters("")
        .withSqlSupportsColumnAliasing(true)
        .withSqlNullPlusNullIsNull(true)
        .withSqlSupportsConvert(conversions())
        .withSqlSupportsTableCorrelationNames(true)
        .withSqlSupportsDifferentTableCorrelationNames(true)
        .withSqlSupportsExpressionsInOrderBy(true)
        .withSqlSupportsOrderByUnrelated(true)
        .withSqlSupportedGroupBy(SqlSupportedGroupBy.SQL_GROUP_BY_UNRELATED, SqlSupportedGroupBy.SQL_GROUP_BY_BEYOND_SELECT)
        .withSqlSupportsLikeEscapeClause(true)
        .withSqlSupportsNonNullableColumns(true)
        .withSqlSupportedGrammar(SupportedSqlGrammar.SQL_MINIMUM_GRAMMAR, SupportedSqlGrammar.SQL_CORE_GRAMMAR)
        .withSqlAnsi92SupportedLevel(SupportedAnsi92SqlGrammarLevel.ANSI92_ENTRY_SQL)
        .withSqlSupportsIntegrityEnhancementFacility(false)
        .withSqlOuterJoinSupportLevel(SqlOuterJoinsSupportLevel.SQL_FULL_OUTER_JOINS)
        .withSqlSchemaTerm("namespace")
        .withSqlProcedureTerm("procedure")
        .withSqlCatalogTerm("catalog")
        .withSqlCatalogAtStart(true)
        .withSqlSchemasSupportedActions()
        .withSqlCatalogsSupportedActions()
        .withSqlSupportedPositionedCommands()
        .withSqlSelectForUpdateSupported(false)
        .withSqlStoredProceduresSupported(false)
        .withSqlSubQueriesSupported(SqlSupportedSubqueries.SQL_SUBQUERIES_IN_COMPARISONS,
            SqlSupportedSubqueries.SQL_SUBQUERIES_IN_EXISTS, SqlSupportedSubqueries.SQL_SUBQUERIES_IN_INS,
            SqlSupportedSubqueries.SQL_SUBQUERIES_IN_QUANTIFIEDS)
        .withSqlCorrelatedSubqueriesSupported(true)
        .withSqlSupportedUnions(SqlSupportedUnions.SQL_UNION, SqlSupportedUnions.SQL_UNION_ALL)
        // 0: no limit (beyond the server's message size).
        .withSqlMaxBinaryLiteralLength(0)
        .withSqlMaxCharLiteralLength(0)
        .withSqlMaxColumnNameLength(0)
        .withSqlMaxColumnsInGroupBy(0)
        .withSqlMaxColumnsInIndex(0)
        .withSqlMaxColumnsInOrderBy(0)
        .withSqlMaxColumnsInSelect(0)
        .withSqlMaxColumnsInTable(0)
        .withSqlMaxConnections(0)
        .withSqlMaxCursorNameLength(0)
        .withSqlMaxIndexLength(0)
        .withSqlDbSchemaNameLength(0)
        .withSqlMaxProcedureNameLength(0)
        .withSqlMaxCatalogNameLength(0)
        .withSqlMaxRowSize(0)
        .withSqlMaxRowSizeIncludesBlobs(false)
        .withSqlMaxStatementLength(0)
        .withSqlMaxStatements(0)
        .withSqlMaxTableNameLength(0)
        .withSqlMaxTablesInSelect(0)
        .withSqlMaxUsernameLength(0)
        .withSqlDefaultTransactionIsolation(0)
        .withSqlTransactionsSupported(false)
        .withSqlSupportedTransactionsIsolationLevels()
        .withSqlDataDefinitionCausesTransactionCommit(false)
        .withSqlDataDefinitionsInTransactionsIgnored(false)
        .withSqlSupportedResultSetTypes(SqlSupportedResultSetType.SQL_RESULT_SET_TYPE_FORWARD_ONLY)
        .withSqlBatchUpdatesSupported(false)
        .withSqlSavepointsSupported(false)
        .withSqlNamedParametersSupported(false)
        .withSqlLocatorsUpdateCopy(false)
        .withSqlStoredFunctionsUsingCallSyntaxSupported(false);
    for (SqlInfo info : SqlInfo.values()) {
      if (info != SqlInfo.UNRECOGNIZED && !UNANSWERED.contains(info)) {
        answered.add(info.getNumber());
      }
    }
  }

  /** Every code answered, in code order. */
  List<Integer> answeredCodes() {
    return answered.stream().sorted().toList();
  }

  /**
   * Sends the requested codes that are answered (all of them for an empty request), one row
   * each, in request order; codes the server does not answer are left out.
   */
  void send(List<Integer> requested, ServerStreamListener listener, BufferAllocator allocator) {
    List<Integer> codes = new ArrayList<>();
    if (requested.isEmpty()) {
      codes.addAll(answeredCodes());
    } else {
      for (Integer code : new java.util.LinkedHashSet<>(requested)) {
        if (answered.contains(code)) {
          codes.add(code);
        }
      }
    }
    if (codes.isEmpty()) {
      try (VectorSchemaRoot root = VectorSchemaRoot.create(Schemas.GET_SQL_INFO_SCHEMA, allocator)) {
        root.setRowCount(0);
        listener.start(root);
        listener.putNext();
        listener.completed();
      }
      return;
    }
    builder.send(codes, listener);
  }

  /**
   * What CAST converts between (every listed type to every other, binary types only to binary
   * and text): DuckDB casts between all numeric, text and date/time types.
   */
  private static Map<Integer, List<Integer>> conversions() {
    List<SqlSupportsConvert> scalar = List.of(SqlSupportsConvert.SQL_CONVERT_BIGINT, SqlSupportsConvert.SQL_CONVERT_BIT,
        SqlSupportsConvert.SQL_CONVERT_CHAR, SqlSupportsConvert.SQL_CONVERT_DECIMAL, SqlSupportsConvert.SQL_CONVERT_FLOAT,
        SqlSupportsConvert.SQL_CONVERT_INTEGER, SqlSupportsConvert.SQL_CONVERT_LONGVARCHAR,
        SqlSupportsConvert.SQL_CONVERT_NUMERIC, SqlSupportsConvert.SQL_CONVERT_REAL, SqlSupportsConvert.SQL_CONVERT_SMALLINT,
        SqlSupportsConvert.SQL_CONVERT_TINYINT, SqlSupportsConvert.SQL_CONVERT_VARCHAR);
    List<SqlSupportsConvert> temporal = List.of(SqlSupportsConvert.SQL_CONVERT_DATE, SqlSupportsConvert.SQL_CONVERT_TIME,
        SqlSupportsConvert.SQL_CONVERT_TIMESTAMP, SqlSupportsConvert.SQL_CONVERT_CHAR,
        SqlSupportsConvert.SQL_CONVERT_VARCHAR, SqlSupportsConvert.SQL_CONVERT_LONGVARCHAR);
    List<SqlSupportsConvert> binary = List.of(SqlSupportsConvert.SQL_CONVERT_BINARY,
        SqlSupportsConvert.SQL_CONVERT_VARBINARY, SqlSupportsConvert.SQL_CONVERT_LONGVARBINARY,
        SqlSupportsConvert.SQL_CONVERT_VARCHAR);
    Map<Integer, List<Integer>> map = new LinkedHashMap<>();
    for (SqlSupportsConvert from : scalar) {
      map.put(from.getNumber(), numbers(scalar));
    }
    for (SqlSupportsConvert from : List.of(SqlSupportsConvert.SQL_CONVERT_DATE, SqlSupportsConvert.SQL_CONVERT_TIME,
        SqlSupportsConvert.SQL_CONVERT_TIMESTAMP)) {
      map.put(from.getNumber(), numbers(temporal));
    }
    for (SqlSupportsConvert text : List.of(SqlSupportsConvert.SQL_CONVERT_CHAR, SqlSupportsConvert.SQL_CONVERT_VARCHAR,
        SqlSupportsConvert.SQL_CONVERT_LONGVARCHAR)) {
      List<Integer> targets = new ArrayList<>(numbers(scalar));
      targets.addAll(numbers(List.of(SqlSupportsConvert.SQL_CONVERT_DATE, SqlSupportsConvert.SQL_CONVERT_TIME,
          SqlSupportsConvert.SQL_CONVERT_TIMESTAMP, SqlSupportsConvert.SQL_CONVERT_VARBINARY)));
      map.put(text.getNumber(), targets);
    }
    for (SqlSupportsConvert from : List.of(SqlSupportsConvert.SQL_CONVERT_BINARY, SqlSupportsConvert.SQL_CONVERT_VARBINARY,
        SqlSupportsConvert.SQL_CONVERT_LONGVARBINARY)) {
      map.put(from.getNumber(), numbers(binary));
    }
    return map;
  }

  private static List<Integer> numbers(List<SqlSupportsConvert> values) {
    return values.stream().map(SqlSupportsConvert::getNumber).toList();
  }
}
