package io.storageengine.query;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.common.SeException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The allow-list check of one statement's parse tree, as DuckDB serializes it
 * ({@code json_serialize_sql}). The whole tree is walked: every query node, table reference,
 * expression, result modifier, CTE, sample and type. Each object must be of a known kind and
 * have only the fields that kind is known to have; every function must be on the
 * {@link SqlAllowList} and unqualified, every table function on its table-function list, every
 * type a built-in one. Anything else (an unknown kind or field, as a newer DuckDB may add) is
 * refused with INVALID_ARGUMENT naming it: the check fails closed.
 *
 * <p>Table names are not judged here beyond time travel: {@link StatementAnalyzer} resolves them
 * against the tenant's catalog. This class only tells which unqualified names refer to a CTE in
 * scope (DuckDB resolves those to the CTE, comparing names ignoring ASCII case).
 */
final class SqlSandbox {
  /**
   * SQL keywords DuckDB binds as functions when no column has the name ({@code SELECT user}),
   * those that reveal the session; the others (current_date, current_time, current_timestamp,
   * localtime, localtimestamp) are allowed.
   */
  private static final Set<String> VALUE_FUNCTIONS_REFUSED =
      Set.of("current_catalog", "current_schema", "current_user", "current_role", "session_user", "user");
  /** Functions the binder handles itself; not in {@code duckdb_functions()}. */
  static final Set<String> BINDER_FUNCTIONS = Set.of("unnest", "unlist");
  /** Functions whose second argument names an aggregate to run: it must be a constant, allowed name. */
  private static final Set<String> AGGREGATE_BY_NAME =
      Set.of("aggregate", "list_aggregate", "list_aggr", "array_aggregate", "array_aggr");

  private static final Set<String> EXPRESSION_COMMON = Set.of("class", "type", "alias", "query_location",
      "query_location_length");
  private static final Set<String> TABLE_REF_COMMON = Set.of("type", "alias", "sample", "query_location",
      "query_location_length");
  private static final Set<String> OPERATOR_TYPES = Set.of("OPERATOR_NOT", "OPERATOR_IS_NULL", "OPERATOR_IS_NOT_NULL",
      "COMPARE_IN", "COMPARE_NOT_IN", "OPERATOR_COALESCE", "ARRAY_EXTRACT", "ARRAY_SLICE", "STRUCT_EXTRACT",
      "ARRAY_CONSTRUCTOR", "OPERATOR_TRY", "OPERATOR_UNPACK", "GROUPING_FUNCTION", "OPERATOR_NULLIF");
  private static final Set<String> COMPARISON_TYPES = Set.of("COMPARE_EQUAL", "COMPARE_NOTEQUAL", "COMPARE_LESSTHAN",
      "COMPARE_GREATERTHAN", "COMPARE_LESSTHANOREQUALTO", "COMPARE_GREATERTHANOREQUALTO", "COMPARE_DISTINCT_FROM",
      "COMPARE_NOT_DISTINCT_FROM");
  private static final Set<String> LITERAL_KINDS = Set.of("INTEGER", "NUMERIC", "STRING", "BOOLEAN", "NULL_LITERAL",
      "HEX", "BIT", "DOUBLE", "DECIMAL");
  private static final Set<String> JOIN_TYPES = Set.of("INNER", "LEFT", "RIGHT", "OUTER", "FULL", "SEMI", "ANTI",
      "MARK", "SINGLE", "RIGHT_SEMI", "RIGHT_ANTI");
  private static final Set<String> JOIN_REF_TYPES = Set.of("REGULAR", "NATURAL", "CROSS", "POSITIONAL", "ASOF",
      "DEPENDENT");
  private static final Set<String> SET_OPERATIONS = Set.of("UNION", "EXCEPT", "INTERSECT", "UNION_BY_NAME");
  private static final Set<String> SUBQUERY_TYPES = Set.of("SCALAR", "EXISTS", "NOT_EXISTS", "ANY");
  private static final Set<String> ORDER_TYPES = Set.of("ORDER_DEFAULT", "ASCENDING", "DESCENDING");

  private SqlSandbox() {}

  /**
   * Checks {@code statement} (one element of {@code json_serialize_sql}'s {@code statements});
   * returns the BASE_TABLE nodes (by identity) that name a CTE in scope.
   */
  static Set<JsonNode> check(JsonNode statement) {
    Walker walker = new Walker();
    walker.statement(statement, List.of());
    return walker.cteReferences;
  }

  private static final class Walker {
    final Set<JsonNode> cteReferences = Collections.newSetFromMap(new IdentityHashMap<>());

    void statement(JsonNode statement, List<String> ctes) {
      fields(statement, "statement", Set.of("node", "named_param_map"));
      JsonNode params = statement.path("named_param_map");
      if (!params.isMissingNode()) {
        for (JsonNode entry : array(params, "named_param_map")) {
          fields(entry, "parameter", Set.of("key", "value"));
        }
      }
      queryNode(statement.path("node"), ctes);
    }

    void queryNode(JsonNode node, List<String> outer) {
      String type = node.path("type").asText();
      switch (type) {
        case "SELECT_NODE" -> {
          fields(node, type, Set.of("type", "modifiers", "cte_map", "select_list", "from_table", "where_clause",
              "group_expressions", "group_sets", "aggregate_handling", "having", "sample", "qualify"));
          List<String> scope = ctes(node.path("cte_map"), outer);
          tableRef(node.path("from_table"), scope);
          expressions(node.path("select_list"), scope, "select list");
          optionalExpression(node.path("where_clause"), scope);
          expressions(node.path("group_expressions"), scope, "GROUP BY");
          for (JsonNode set : array(node.path("group_sets"), "group_sets")) {
            for (JsonNode index : array(set, "group_sets")) {
              if (!index.isIntegralNumber()) {
                throw unsupported("GROUP BY grouping set entry", index.toString());
              }
            }
          }
          optionalExpression(node.path("having"), scope);
          optionalExpression(node.path("qualify"), scope);
          sample(node.path("sample"));
          modifiers(node.path("modifiers"), scope);
        }
        case "SET_OPERATION_NODE" -> {
          fields(node, type, Set.of("type", "modifiers", "cte_map", "left", "right", "children", "setop_all",
              "setop_type"));
          oneOf(node.path("setop_type").asText(), SET_OPERATIONS, "set operation");
          List<String> scope = ctes(node.path("cte_map"), outer);
          for (String side : List.of("left", "right")) {
            if (!isNull(node.path(side))) {
              queryNode(node.path(side), scope);
            }
          }
          if (!isNull(node.path("children"))) {
            for (JsonNode child : array(node.path("children"), "children")) {
              queryNode(child, scope);
            }
          }
          modifiers(node.path("modifiers"), scope);
        }
        case "RECURSIVE_CTE_NODE" -> {
          fields(node, type, Set.of("type", "modifiers", "cte_map", "cte_name", "aliases", "key_targets", "left",
              "right", "union_all"));
          List<String> scope = ctes(node.path("cte_map"), outer);
          // DuckDB binds the CTE's own name only in the recursive branch: in the anchor it is a
          // catalog name (SELECT * FROM duckdb_types there reads DuckDB's view).
          queryNode(node.path("left"), scope);
          List<String> recursive = new ArrayList<>(scope);
          recursive.add(node.path("cte_name").asText());
          queryNode(node.path("right"), recursive);
          expressions(node.path("key_targets"), scope, "USING KEY");
          modifiers(node.path("modifiers"), scope);
        }
        default -> throw unsupported("query node", type);
      }
    }

    /**
     * Checks the CTEs of {@code cteMap} and returns the names visible in the query body: each CTE
     * sees those before it (and itself in the recursive branch of a recursive CTE), as DuckDB
     * resolves them. A name DuckDB might resolve elsewhere is never taken for a CTE: an
     * unqualified name that is not one is refused.
     */
    List<String> ctes(JsonNode cteMap, List<String> outer) {
      if (isNull(cteMap)) {
        return outer;
      }
      fields(cteMap, "cte_map", Set.of("map"));
      List<String> scope = new ArrayList<>(outer);
      for (JsonNode entry : array(cteMap.path("map"), "WITH")) {
        fields(entry, "WITH entry", Set.of("key", "value"));
        String name = entry.path("key").asText();
        JsonNode value = entry.path("value");
        fields(value, "WITH entry", Set.of("aliases", "materialized", "key_targets", "payload_aggregates", "query_node"));
        JsonNode query = value.path("query_node");
        if ("RECURSIVE_CTE_NODE".equals(query.path("type").asText())
            && !SqlAllowList.fold(query.path("cte_name").asText()).equals(SqlAllowList.fold(name))) {
          throw unsupported("recursive CTE", query.path("cte_name").asText());
        }
        queryNode(query, scope);
        expressions(value.path("key_targets"), scope, "USING KEY");
        expressions(value.path("payload_aggregates"), scope, "USING KEY");
        scope.add(name);
      }
      return scope;
    }

    void modifiers(JsonNode modifiers, List<String> scope) {
      for (JsonNode modifier : array(modifiers, "modifiers")) {
        String type = modifier.path("type").asText();
        switch (type) {
          case "ORDER_MODIFIER" -> orders(modifier, scope);
          case "LIMIT_MODIFIER" -> {
            fields(modifier, type, Set.of("type", "limit", "offset", "limit_type"));
            optionalExpression(modifier.path("limit"), scope);
            optionalExpression(modifier.path("offset"), scope);
          }
          case "LIMIT_PERCENT_MODIFIER" -> {
            fields(modifier, type, Set.of("type", "limit", "offset"));
            optionalExpression(modifier.path("limit"), scope);
            optionalExpression(modifier.path("offset"), scope);
          }
          case "DISTINCT_MODIFIER" -> {
            fields(modifier, type, Set.of("type", "distinct_on_targets"));
            expressions(modifier.path("distinct_on_targets"), scope, "DISTINCT ON");
          }
          default -> throw unsupported("result modifier", type);
        }
      }
    }

    void orders(JsonNode modifier, List<String> scope) {
      if (isNull(modifier)) {
        return;
      }
      fields(modifier, "ORDER BY", Set.of("type", "orders"));
      if (!"ORDER_MODIFIER".equals(modifier.path("type").asText())) {
        throw unsupported("ordering", modifier.path("type").asText());
      }
      orderList(modifier.path("orders"), scope);
    }

    void orderList(JsonNode orders, List<String> scope) {
      for (JsonNode order : array(orders, "ORDER BY")) {
        fields(order, "ORDER BY", Set.of("type", "null_order", "expression"));
        oneOf(order.path("type").asText(), ORDER_TYPES, "ordering");
        expression(order.path("expression"), scope);
      }
    }

    void sample(JsonNode sample) {
      if (isNull(sample)) {
        return;
      }
      fields(sample, "SAMPLE", Set.of("sample_size", "is_percentage", "method", "seed", "repeatable", "sample_rate"));
      value(sample.path("sample_size"), "SAMPLE");
    }

    /** A serialized DuckDB Value (sample sizes): a type and a scalar. */
    void value(JsonNode value, String where) {
      if (isNull(value)) {
        return;
      }
      fields(value, where + " value", Set.of("type", "is_null", "value"));
      JsonNode type = value.path("type");
      fields(type, where + " value type", Set.of("id", "type_info"));
      if (!value.path("value").isValueNode() || !(isNull(type.path("type_info")) || scalars(type.path("type_info")))) {
        throw unsupported(where + " value", value.toString());
      }
    }

    void tableRef(JsonNode ref, List<String> scope) {
      String type = ref.path("type").asText();
      sample(ref.path("sample"));
      switch (type) {
        case "EMPTY" -> fields(ref, type, TABLE_REF_COMMON);
        case "BASE_TABLE" -> {
          fields(ref, type, with(TABLE_REF_COMMON, "schema_name", "table_name", "column_name_alias", "catalog_name",
              "at_clause", "qualified_name"));
          String written = qualifiedName(ref.path("catalog_name").asText(), ref.path("schema_name").asText(),
              ref.path("table_name").asText());
          checkPath(ref.path("qualified_name"), written, "table");
          if (!isNull(ref.path("at_clause"))) {
            // Only a literal value (checked here, never evaluated): see TimeTravel.
            fields(ref.path("at_clause"), "AT", Set.of("unit", "expr"));
            TimeTravel.spec(ref.path("at_clause"), written);
          }
          if (ref.path("catalog_name").asText().isEmpty() && ref.path("schema_name").asText().isEmpty()
              && contains(scope, ref.path("table_name").asText())) {
            cteReferences.add(ref);
          }
        }
        case "JOIN" -> {
          fields(ref, type, with(TABLE_REF_COMMON, "left", "right", "condition", "join_type", "ref_type",
              "using_columns", "delim_flipped", "duplicate_eliminated_columns", "is_implicit", "ranking_expression",
              "nearest_count", "nearest_order_type", "nearest_approx"));
          oneOf(ref.path("join_type").asText(), JOIN_TYPES, "join type");
          oneOf(ref.path("ref_type").asText(), JOIN_REF_TYPES, "join");
          if (ref.path("delim_flipped").asBoolean(false) || array(ref.path("duplicate_eliminated_columns"),
              "join").size() > 0) {
            throw unsupported("join", "duplicate-eliminated join");
          }
          if (!isNull(ref.path("ranking_expression"))) {
            throw unsupported("join", "nearest-neighbour join");
          }
          tableRef(ref.path("left"), scope);
          tableRef(ref.path("right"), scope);
          optionalExpression(ref.path("condition"), scope);
        }
        case "SUBQUERY" -> {
          fields(ref, type, with(TABLE_REF_COMMON, "subquery", "column_name_alias"));
          statement(ref.path("subquery"), scope);
        }
        case "TABLE_FUNCTION" -> {
          fields(ref, type, with(TABLE_REF_COMMON, "function", "column_name_alias", "with_ordinality"));
          JsonNode function = ref.path("function");
          fields(function, "table function", with(EXPRESSION_COMMON, "function_name", "schema", "catalog",
              "arguments", "filter", "order_bys", "distinct", "is_operator", "export_state", "qualified_name"));
          String name = function.path("function_name").asText();
          if (!"FUNCTION".equals(function.path("class").asText()) || !SqlAllowList.get().tableFunction(name)
              || !function.path("schema").asText().isEmpty() || !function.path("catalog").asText().isEmpty()) {
            throw SeException.invalid("table function `%s` is not allowed: queries read only the tables of the "
                + "selected catalog (allowed table functions: range, generate_series, unnest)",
                displayName(function));
          }
          functionCall(function, scope, false);
        }
        case "EXPRESSION_LIST" -> {
          fields(ref, type, with(TABLE_REF_COMMON, "values", "expected_names", "expected_types"));
          if (array(ref.path("expected_types"), "VALUES").size() > 0) {
            throw unsupported("VALUES", "typed VALUES list");
          }
          for (JsonNode row : array(ref.path("values"), "VALUES")) {
            expressions(row, scope, "VALUES");
          }
        }
        case "PIVOT" -> {
          fields(ref, type, with(TABLE_REF_COMMON, "source", "aggregates", "unpivot_names", "pivots", "groups",
              "column_name_alias", "include_nulls"));
          tableRef(ref.path("source"), scope);
          expressions(ref.path("aggregates"), scope, "PIVOT");
          for (JsonNode pivot : array(ref.path("pivots"), "PIVOT")) {
            fields(pivot, "PIVOT column", Set.of("unpivot_names", "pivot_expressions", "entries", "pivot_enum"));
            if (!pivot.path("pivot_enum").asText().isEmpty()) {
              throw unsupported("PIVOT", "PIVOT without an IN list");
            }
            expressions(pivot.path("pivot_expressions"), scope, "PIVOT");
            for (JsonNode entry : array(pivot.path("entries"), "PIVOT")) {
              fields(entry, "PIVOT entry", Set.of("values", "star_expr", "alias"));
              for (JsonNode value : array(entry.path("values"), "PIVOT")) {
                value(value, "PIVOT");
              }
              optionalExpression(entry.path("star_expr"), scope);
            }
          }
        }
        case "SHOW_REF" -> {
          fields(ref, type, with(TABLE_REF_COMMON, "table_name", "schema_name", "catalog_name", "qualified_name",
              "query", "show_type"));
          String show = ref.path("show_type").asText();
          if (!"DESCRIBE".equals(show) && !"SUMMARY".equals(show)) {
            throw SeException.invalid("SHOW inside a query is not supported: use SHOW TABLES, DESCRIBE <table> "
                + "or information_schema.tables");
          }
          if (!ref.path("table_name").asText().isEmpty() || isNull(ref.path("query"))) {
            throw unsupported(show, ref.path("table_name").asText());
          }
          queryNode(ref.path("query"), scope);
        }
        default -> throw unsupported("table reference", type);
      }
    }

    void expressions(JsonNode list, List<String> scope, String where) {
      for (JsonNode expression : array(list, where)) {
        expression(expression, scope);
      }
    }

    void optionalExpression(JsonNode expression, List<String> scope) {
      if (!isNull(expression)) {
        expression(expression, scope);
      }
    }

    void expression(JsonNode e, List<String> scope) {
      if (!e.isObject()) {
        throw unsupported("expression", e.toString());
      }
      String clazz = e.path("class").asText();
      String type = e.path("type").asText();
      switch (clazz) {
        case "CONSTANT" -> {
          fields(e, clazz, with(EXPRESSION_COMMON, "literal"));
          JsonNode literal = e.path("literal");
          fields(literal, "literal", Set.of("kind", "text"));
          oneOf(literal.path("kind").asText(), LITERAL_KINDS, "literal");
          if (!literal.path("text").isMissingNode() && !literal.path("text").isTextual()) {
            throw unsupported("literal", literal.toString());
          }
        }
        case "COLUMN_REF" -> {
          fields(e, clazz, with(EXPRESSION_COMMON, "column_names"));
          JsonNode names = array(e.path("column_names"), "column");
          for (JsonNode name : names) {
            if (!name.isTextual()) {
              throw unsupported("column", names.toString());
            }
          }
          if (names.size() == 1) {
            String name = SqlAllowList.fold(names.get(0).asText());
            if (VALUE_FUNCTIONS_REFUSED.contains(name)) {
              throw SeException.invalid("function `%s` is not allowed in queries (to read a column of that name, "
                  + "qualify it with its table: t.%s)", names.get(0).asText(), names.get(0).asText());
            }
          }
        }
        case "PARAMETER" -> {
          fields(e, clazz, with(EXPRESSION_COMMON, "identifier"));
          String identifier = e.path("identifier").asText();
          if (!identifier.isEmpty() && !identifier.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw SeException.invalid("named parameter `$%s` is not supported: use ? or $1, $2, ... "
                + "(values bind by position)", identifier);
          }
        }
        case "POSITIONAL_REFERENCE" -> fields(e, clazz, with(EXPRESSION_COMMON, "index"));
        case "FUNCTION" -> {
          fields(e, clazz, with(EXPRESSION_COMMON, "function_name", "schema", "catalog", "arguments", "filter",
              "order_bys", "distinct", "is_operator", "export_state", "qualified_name"));
          functionCall(e, scope, true);
        }
        case "WINDOW" -> window(e, scope);
        case "CAST" -> {
          fields(e, clazz, with(EXPRESSION_COMMON, "child", "type_expr", "try_cast"));
          expression(e.path("child"), scope);
          type(e.path("type_expr"), scope);
        }
        case "TYPE" -> type(e, scope);
        case "COMPARISON" -> {
          fields(e, clazz, with(EXPRESSION_COMMON, "left", "right"));
          oneOf(type, COMPARISON_TYPES, "comparison");
          expression(e.path("left"), scope);
          expression(e.path("right"), scope);
        }
        case "CONJUNCTION" -> {
          fields(e, clazz, with(EXPRESSION_COMMON, "children"));
          oneOf(type, Set.of("CONJUNCTION_AND", "CONJUNCTION_OR"), "conjunction");
          expressions(e.path("children"), scope, type);
        }
        case "OPERATOR" -> {
          fields(e, clazz, with(EXPRESSION_COMMON, "children"));
          oneOf(type, OPERATOR_TYPES, "operator");
          expressions(e.path("children"), scope, type);
        }
        case "CASE" -> {
          fields(e, clazz, with(EXPRESSION_COMMON, "case_checks", "else_expr"));
          for (JsonNode check : array(e.path("case_checks"), "CASE")) {
            fields(check, "CASE WHEN", Set.of("when_expr", "then_expr"));
            expression(check.path("when_expr"), scope);
            expression(check.path("then_expr"), scope);
          }
          optionalExpression(e.path("else_expr"), scope);
        }
        case "BETWEEN" -> {
          fields(e, clazz, with(EXPRESSION_COMMON, "input", "lower", "upper"));
          expression(e.path("input"), scope);
          expression(e.path("lower"), scope);
          expression(e.path("upper"), scope);
        }
        case "STAR" -> {
          fields(e, clazz, with(EXPRESSION_COMMON, "relation_name", "exclude_list", "replace_list", "rename_list",
              "columns", "expr", "qualified_exclude_list", "unpacked"));
          for (JsonNode entry : array(e.path("replace_list"), "REPLACE")) {
            fields(entry, "REPLACE", Set.of("key", "value"));
            expression(entry.path("value"), scope);
          }
          for (JsonNode entry : array(e.path("rename_list"), "RENAME")) {
            fields(entry, "RENAME", Set.of("key", "value"));
            if (!entry.path("value").isTextual()) {
              throw unsupported("RENAME", entry.toString());
            }
          }
          for (String list : List.of("exclude_list", "qualified_exclude_list")) {
            for (JsonNode item : array(e.path(list), "EXCLUDE")) {
              if (!item.isTextual() && !(item.isObject() && onlyText(item))) {
                throw unsupported("EXCLUDE", item.toString());
              }
            }
          }
          optionalExpression(e.path("expr"), scope);
        }
        case "SUBQUERY" -> {
          fields(e, clazz, with(EXPRESSION_COMMON, "subquery", "subquery_type", "child", "comparison_type"));
          oneOf(e.path("subquery_type").asText(), SUBQUERY_TYPES, "subquery");
          statement(e.path("subquery"), scope);
          optionalExpression(e.path("child"), scope);
        }
        case "LAMBDA" -> {
          fields(e, clazz, with(EXPRESSION_COMMON, "lhs", "expr", "syntax_type"));
          lambdaParameters(e.path("lhs"));
          expression(e.path("expr"), scope);
        }
        case "COLLATE" -> {
          fields(e, clazz, with(EXPRESSION_COMMON, "child", "collation"));
          if (!e.path("collation").asText().matches("[A-Za-z0-9_.]+")) {
            throw unsupported("collation", e.path("collation").asText());
          }
          expression(e.path("child"), scope);
        }
        default -> throw unsupported("expression", clazz.isEmpty() ? e.toString() : clazz);
      }
    }

    /** Lambda parameters: a column name or a row of them. */
    void lambdaParameters(JsonNode lhs) {
      String clazz = lhs.path("class").asText();
      if ("COLUMN_REF".equals(clazz)) {
        fields(lhs, "lambda parameter", with(EXPRESSION_COMMON, "column_names"));
        if (array(lhs.path("column_names"), "lambda parameter").size() != 1) {
          throw unsupported("lambda parameter", lhs.path("column_names").toString());
        }
        return;
      }
      if ("FUNCTION".equals(clazz) && "row".equals(lhs.path("function_name").asText())) {
        for (JsonNode argument : array(lhs.path("arguments"), "lambda parameters")) {
          lambdaParameters(argument.path("expression"));
        }
        return;
      }
      throw unsupported("lambda parameter", clazz);
    }

    void functionCall(JsonNode e, List<String> scope, boolean scalar) {
      String name = e.path("function_name").asText();
      String folded = SqlAllowList.fold(name);
      if (!e.path("schema").asText().isEmpty() || !e.path("catalog").asText().isEmpty()) {
        throw SeException.invalid("function `%s` is not allowed in queries: functions cannot be qualified with a "
            + "schema or catalog", displayName(e));
      }
      checkPath(e.path("qualified_name"), name, "function");
      if (scalar && !SqlAllowList.get().function(name) && !BINDER_FUNCTIONS.contains(folded)) {
        throw SeException.invalid("function `%s` is not allowed in queries: only pure scalar, aggregate and window "
            + "functions are", name);
      }
      if (e.path("export_state").asBoolean(false)) {
        throw SeException.invalid("function `%s`: EXPORT_STATE is not allowed in queries", name);
      }
      List<JsonNode> arguments = arguments(e.path("arguments"), scope);
      if (AGGREGATE_BY_NAME.contains(folded)) {
        JsonNode aggregate = arguments.size() >= 2 ? arguments.get(1) : null;
        String named = aggregate != null && "CONSTANT".equals(aggregate.path("class").asText())
            ? aggregate.path("literal").path("text").asText(null) : null;
        if (named == null || !SqlAllowList.get().function(named)) {
          throw SeException.invalid("function `%s`: the aggregate must be a string constant naming an allowed "
              + "aggregate function%s", name, named == null ? "" : " (`" + named + "` is not)");
        }
      }
      optionalExpression(e.path("filter"), scope);
      orders(e.path("order_bys"), scope);
    }

    /** Checks a function's arguments ({@code name := value} or plain) and returns their expressions. */
    List<JsonNode> arguments(JsonNode list, List<String> scope) {
      List<JsonNode> arguments = new ArrayList<>();
      for (JsonNode argument : array(list, "arguments")) {
        fields(argument, "argument", Set.of("name", "expression"));
        arguments.add(argument.path("expression"));
        expression(argument.path("expression"), scope);
      }
      return arguments;
    }

    void window(JsonNode e, List<String> scope) {
      fields(e, "WINDOW", with(EXPRESSION_COMMON, "function_name", "schema", "catalog", "arguments", "partitions",
          "orders", "start", "end", "start_expr", "end_expr", "offset_expr", "default_expr", "filter_expr",
          "ignore_nulls", "has_ignore_nulls", "distinct", "exclude_clause", "arg_orders", "qualified_name"));
      String name = e.path("function_name").asText();
      if (!e.path("schema").asText().isEmpty() || !e.path("catalog").asText().isEmpty()) {
        throw SeException.invalid("function `%s` is not allowed in queries: functions cannot be qualified with a "
            + "schema or catalog", displayName(e));
      }
      checkPath(e.path("qualified_name"), name, "function");
      if (!SqlAllowList.get().function(name)) {
        throw SeException.invalid("function `%s` is not allowed in queries: only pure scalar, aggregate and window "
            + "functions are", name);
      }
      arguments(e.path("arguments"), scope);
      expressions(e.path("partitions"), scope, "PARTITION BY");
      orderList(e.path("orders"), scope);
      orderList(e.path("arg_orders"), scope);
      for (String field : List.of("start_expr", "end_expr", "offset_expr", "default_expr", "filter_expr")) {
        optionalExpression(e.path(field), scope);
      }
    }

    void type(JsonNode type, List<String> scope) {
      if (!"TYPE".equals(type.path("class").asText())) {
        throw unsupported("type", type.toString());
      }
      fields(type, "type", with(EXPRESSION_COMMON, "catalog", "schema", "type_name", "children", "qualified_name"));
      String name = type.path("type_name").asText();
      if (!type.path("catalog").asText().isEmpty() || !type.path("schema").asText().isEmpty()) {
        throw SeException.invalid("type `%s` is not allowed in queries: types cannot be qualified with a schema "
            + "or catalog", qualifiedName(type.path("catalog").asText(), type.path("schema").asText(), name));
      }
      if (!SqlAllowList.get().type(name)) {
        throw SeException.invalid("type `%s` is not allowed in queries: only DuckDB's built-in types are", name);
      }
      for (JsonNode child : array(type.path("children"), "type")) {
        if ("TYPE".equals(child.path("class").asText())) {
          type(child, scope);
        } else if ("CONSTANT".equals(child.path("class").asText())) {
          expression(child, scope);
        } else {
          throw unsupported("type parameter", child.path("class").asText());
        }
      }
    }
  }

  private static boolean contains(List<String> scope, String name) {
    String folded = SqlAllowList.fold(name);
    for (String cte : scope) {
      if (SqlAllowList.fold(cte).equals(folded)) {
        return true;
      }
    }
    return false;
  }

  /** The path DuckDB recorded must be the very parts the statement names (nothing else is bound). */
  private static void checkPath(JsonNode qualified, String written, String what) {
    if (isNull(qualified)) {
      return;
    }
    fields(qualified, what + " name", Set.of("path"));
    List<String> parts = new ArrayList<>();
    for (JsonNode part : array(qualified.path("path"), what + " name")) {
      parts.add(part.asText());
    }
    if (!String.join(".", parts).equals(written)) {
      throw unsupported(what + " name", String.join(".", parts));
    }
  }

  private static String qualifiedName(String catalog, String schema, String name) {
    List<String> parts = new ArrayList<>();
    for (String part : List.of(catalog, schema, name)) {
      if (!part.isEmpty()) {
        parts.add(part);
      }
    }
    return String.join(".", parts);
  }

  private static String displayName(JsonNode function) {
    return qualifiedName(function.path("catalog").asText(), function.path("schema").asText(),
        function.path("function_name").asText());
  }

  /** An object of scalar fields (a DECIMAL's width and scale). */
  private static boolean scalars(JsonNode node) {
    if (!node.isObject()) {
      return false;
    }
    for (Iterator<JsonNode> it = node.elements(); it.hasNext(); ) {
      JsonNode child = it.next();
      if (!child.isValueNode()) {
        return false;
      }
    }
    return true;
  }

  private static boolean onlyText(JsonNode node) {
    for (Iterator<JsonNode> it = node.elements(); it.hasNext(); ) {
      JsonNode child = it.next();
      if (!child.isTextual() && !(child.isArray() && allText(child))) {
        return false;
      }
    }
    return true;
  }

  private static boolean allText(JsonNode array) {
    for (JsonNode child : array) {
      if (!child.isTextual()) {
        return false;
      }
    }
    return true;
  }

  private static boolean isNull(JsonNode node) {
    return node == null || node.isNull() || node.isMissingNode();
  }

  private static JsonNode array(JsonNode node, String where) {
    if (isNull(node)) {
      return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
    }
    if (!node.isArray()) {
      throw unsupported(where, node.toString());
    }
    return node;
  }

  /** Refuses an object with a field its kind is not known to have. */
  private static void fields(JsonNode node, String kind, Set<String> known) {
    if (!node.isObject()) {
      throw unsupported(kind, node.toString());
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
      String field = it.next().getKey();
      if (!known.contains(field)) {
        throw unsupported(kind, "field " + field);
      }
    }
  }

  private static void oneOf(String value, Set<String> known, String what) {
    if (!known.contains(value)) {
      throw unsupported(what, value);
    }
  }

  private static Set<String> with(Set<String> base, String... more) {
    Set<String> out = new java.util.HashSet<>(base);
    out.addAll(List.of(more));
    return out;
  }

  private static SeException unsupported(String what, String detail) {
    String shown = detail.length() > 80 ? detail.substring(0, 80) + "..." : detail;
    return SeException.invalid("SQL construct not allowed in queries: %s (%s)", what, shown);
  }
}
