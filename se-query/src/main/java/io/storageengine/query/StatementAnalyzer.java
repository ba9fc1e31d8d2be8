package io.storageengine.query;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.duckdb.SqlQuoting;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Walks the AST DuckDB returns for one statement ({@code json_serialize_sql}) and decides what
 * the statement may touch: the tenant tables it references, the {@code information_schema}
 * views it reads, simple filters per table, and whether it is a {@code DESCRIBE} or
 * {@code SHOW TABLES} that the catalog answers. The whole tree first passes the allow-list check
 * of {@link SqlSandbox} (functions, table functions, types, every node kind); table names are
 * then judged here: only tables of the selected catalog (its namespaces), CTEs in scope and the
 * emulated {@code information_schema} views. Other catalogs, DuckDB's own schemas and file
 * names used as tables are refused with INVALID_ARGUMENT naming the construct. A reference with
 * time travel ({@link TimeTravel}) is a table of its own (its key names the clause), read through
 * a view its reference is renamed to ({@link Analysis#travel}); a name {@code "t$snapshots"} and
 * the like reads a metadata table of {@code t} ({@link MetadataTables}); naming a row lineage
 * column ({@link RowLineage}) anywhere makes the views carry them ({@link Analysis#lineage}).
 */
final class StatementAnalyzer {
  /** The catalog name the selected tenant has in SQL. */
  static final String CATALOG = "default";
  /**
   * Catalogs DuckDB attaches besides the query's {@code default}: a two-part name {@code x.t}
   * with such an {@code x} could resolve to the catalog rather than a tenant namespace.
   */
  private static final Set<String> DUCKDB_CATALOGS = Set.of("system", "temp", "memory");
  /** DuckDB's own schemas, never a tenant's (compared ignoring ASCII case, as DuckDB does). */
  private static final Set<String> DUCKDB_SCHEMAS = Set.of("pg_catalog");
  static final Set<String> INFORMATION_SCHEMA_VIEWS = Set.of("tables", "columns", "schemata");

  private StatementAnalyzer() {}

  /**
   * The namespace an unqualified table name reads ({@code SELECT * FROM t} is
   * {@code default.default.t}); its DuckDB view is {@code main.t}, where DuckDB resolves an
   * unqualified name.
   */
  static final String DEFAULT_NAMESPACE = "default";
  /** The DuckDB schema of the views of unqualified names. */
  static final String UNQUALIFIED_SCHEMA = "main";

  /**
   * A tenant table as written in SQL: the DuckDB schema its view is created in, its name, and the
   * tenant namespace (dot-separated) it is read from: the schema itself, or
   * {@link #DEFAULT_NAMESPACE} for an unqualified name (whose schema is {@link #UNQUALIFIED_SCHEMA}).
   */
  record TableName(String schema, String table, String namespace) {
    TableName(String schema, String table) {
      this(schema, table, schema);
    }

    /** Whether the name was written without a namespace. */
    boolean unqualified() {
      return !schema.equals(namespace);
    }

    String key() {
      return schema.toLowerCase(Locale.ROOT) + "\u001f" + table.toLowerCase(Locale.ROOT);
    }
  }

  /**
   * {@code column op literal} found at the top of a WHERE over a single table. For
   * {@code column op ?} the kind is {@link #PARAMETER} and the text the parameter's number. For
   * {@code column IN (v1, v2, ...)} (every value a literal or a parameter) the operator is
   * {@link #IN}, kind and text are null and {@code anyOf} holds one {@code column = v} comparison
   * per value; otherwise {@code anyOf} is empty.
   */
  record Comparison(String column, String operator, String literalKind, String literalText, List<Comparison> anyOf) {
    Comparison(String column, String operator, String literalKind, String literalText) {
      this(column, operator, literalKind, literalText, List.of());
    }

    Comparison {
      anyOf = List.copyOf(anyOf);
    }
  }

  /** {@link Comparison#operator()} of a {@code column IN (...)} list. */
  static final String IN = "COMPARE_IN";

  /** {@link Comparison#literalKind()} of a comparison with a statement parameter. */
  static final String PARAMETER = "PARAMETER";

  /**
   * Where the statement references an information_schema view, as DuckDB locates a table
   * reference: {@code length} bytes from byte {@code start} of its UTF-8 text, covering the
   * qualified name ({@code nameParts} identifiers: 2, or 3 with the catalog) and whatever follows
   * it in the reference (alias, column aliases, sample). See {@link StatementSplice}.
   */
  record Span(int start, int length, String view, int nameParts, boolean timeTravel) {
    Span(int start, int length, String view, int nameParts) {
      this(start, length, view, nameParts, false);
    }
  }

  /**
   * A table reference with time travel: the key of its table in {@link Analysis#tables}, its
   * clause, and where it is in the statement ({@link Span#timeTravel}; its {@code view} is the
   * name as written), so it can be renamed to its table's view with the clause removed (see
   * {@link StatementSplice}). References with the same table and clause share the key.
   */
  record Travel(String key, TimeTravel.Spec spec, Span span) {}

  enum Kind { QUERY, DESCRIBE_TABLE, SHOW_TABLES }

  /**
   * What one statement references. {@code tables} are keyed by {@link TableName#key()}, with the
   * clause appended for a reference with time travel (each such reference in {@code travel}); {@code metadataTables} gives the kind of the keys that name a metadata table;
   * {@code lineage} whether the statement names a row lineage column; {@code stars} the byte
   * offsets just after each plain {@code *} (or {@code t.*}) of a select list that reads a tenant
   * table directly (not through a subquery or CTE), where the lineage columns are excluded again
   * (see {@link RowLineage#starExclusion}).
   */
  record Analysis(Kind kind, Map<String, TableName> tables, Map<String, List<Comparison>> filters,
      List<Span> informationSchema, TableName describeTarget, List<Travel> travel,
      Map<String, String> metadataTables, boolean lineage, List<Integer> stars) {
    /** Immutable (shared by every query of the same text), keeping the order tables appear in. */
    Analysis {
      tables = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(tables));
      Map<String, List<Comparison>> copied = new LinkedHashMap<>();
      filters.forEach((key, list) -> copied.put(key, List.copyOf(list)));
      filters = java.util.Collections.unmodifiableMap(copied);
      informationSchema = List.copyOf(informationSchema);
      travel = List.copyOf(travel);
      metadataTables = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(metadataTables));
      stars = List.copyOf(stars);
    }

    Analysis(Kind kind, Map<String, TableName> tables, Map<String, List<Comparison>> filters,
        List<Span> informationSchema, TableName describeTarget) {
      this(kind, tables, filters, informationSchema, describeTarget, List.of(), Map.of(), false, List.of());
    }
  }

  static Analysis analyze(JsonNode statement) {
    JsonNode node = statement.path("node");
    JsonNode from = node.path("from_table");
    if ("SHOW_REF".equals(from.path("type").asText()) && isPlainStar(node)
        && "SHOW_SPECIAL".equals(from.path("show_type").asText())) {
      String what = unquote(from.path("table_name").asText());
      if (what.equalsIgnoreCase("tables") || what.equalsIgnoreCase("__show_tables_expanded")) {
        return new Analysis(Kind.SHOW_TABLES, Map.of(), Map.of(), List.of(), null);
      }
      throw SeException.invalid("SHOW %s is not supported: use SHOW TABLES, DESCRIBE <table> or information_schema", what);
    }
    Set<JsonNode> cteReferences = SqlSandbox.check(statement);
    if ("SHOW_REF".equals(from.path("type").asText()) && isPlainStar(node)) {
      String showType = from.path("show_type").asText();
      if ("SHOW_SPECIAL".equals(showType)) {
        String what = unquote(from.path("table_name").asText());
        if (what.equalsIgnoreCase("tables") || what.equalsIgnoreCase("__show_tables_expanded")) {
          return new Analysis(Kind.SHOW_TABLES, Map.of(), Map.of(), List.of(), null);
        }
        throw SeException.invalid("SHOW %s is not supported: use SHOW TABLES, DESCRIBE <table> or information_schema", what);
      }
      JsonNode query = from.path("query");
      if ("DESCRIBE".equals(showType) && isPlainStar(query)
          && "BASE_TABLE".equals(query.path("from_table").path("type").asText())) {
        Walker walker = new Walker(cteReferences);
        walker.visit(query);
        if (walker.tables.size() == 1 && walker.informationSchema.isEmpty()) {
          TableName target = walker.tables.values().iterator().next();
          return new Analysis(Kind.DESCRIBE_TABLE, walker.tables, Map.of(), List.of(), target, walker.travel,
              walker.metadataTables, false, List.of());
        }
      }
    }
    Walker walker = new Walker(cteReferences);
    walker.visit(node);
    Map<String, List<Comparison>> filters = new LinkedHashMap<>();
    walker.filters.forEach((key, list) -> {
      if (walker.referenceCounts.getOrDefault(key, 0) == 1 && !list.isEmpty()) {
        filters.put(key, list);
      }
    });
    return new Analysis(Kind.QUERY, walker.tables, filters, walker.informationSchema, null, walker.travel,
        walker.metadataTables, walker.lineage, walker.lineage ? walker.stars : List.of());
  }

  private static boolean isPlainStar(JsonNode select) {
    JsonNode list = select.path("select_list");
    return "SELECT_NODE".equals(select.path("type").asText()) && list.size() == 1
        && "STAR".equals(list.get(0).path("class").asText()) && select.path("where_clause").isNull()
        && select.path("modifiers").size() == 0 && select.path("group_expressions").size() == 0;
  }

  private static String unquote(String name) {
    return name.length() >= 2 && name.startsWith("\"") && name.endsWith("\"")
        ? name.substring(1, name.length() - 1).replace("\"\"", "\"") : name;
  }

  private static final class Walker {
    final Map<String, TableName> tables = new LinkedHashMap<>();
    final Map<String, Integer> referenceCounts = new LinkedHashMap<>();
    final Map<String, List<Comparison>> filters = new LinkedHashMap<>();
    final List<Span> informationSchema = new ArrayList<>();
    final List<Travel> travel = new ArrayList<>();
    final Map<String, String> metadataTables = new LinkedHashMap<>();
    boolean lineage;
    final List<Integer> stars = new ArrayList<>();
    /** BASE_TABLE nodes naming a CTE in scope (see {@link SqlSandbox#check}). */
    final Set<JsonNode> cteReferences;
    final Map<JsonNode, List<Comparison>> whereByTableRef = new IdentityHashMap<>();
    /** Whether an unqualified name, or one in a tenant namespace {@code main}, was seen (they would share views). */
    private boolean unqualified;
    private boolean qualifiedMain;

    Walker(Set<JsonNode> cteReferences) {
      this.cteReferences = cteReferences;
    }

    void visit(JsonNode node) {
      if (node.isArray()) {
        node.forEach(this::visit);
        return;
      }
      if (!node.isObject()) {
        return;
      }
      String type = node.path("type").asText();
      if ("SELECT_NODE".equals(type)) {
        JsonNode from = node.path("from_table");
        if ("BASE_TABLE".equals(from.path("type").asText())) {
          whereByTableRef.put(from, comparisons(node.path("where_clause"), from));
        }
        plainStars(node);
      }
      if ("BASE_TABLE".equals(type) && !cteReferences.contains(node)) {
        tableReference(node);
      }
      if ("COLUMN_REF".equals(node.path("class").asText()) && node.path("column_names").size() > 0
          && RowLineage.isColumn(node.path("column_names").get(node.path("column_names").size() - 1).asText())) {
        lineage = true;
      }
      node.fields().forEachRemaining(entry -> visit(entry.getValue()));
    }

    private void tableReference(JsonNode ref) {
      String catalog = ref.path("catalog_name").asText();
      String schema = ref.path("schema_name").asText();
      String table = ref.path("table_name").asText();
      List<String> parts = nonEmpty(catalog, schema, table);
      String written = String.join(".", parts);
      JsonNode at = ref.path("at_clause");
      Travel travel = null;
      if (!at.isNull() && !at.isMissingNode()) {
        long location = ref.path("query_location").asLong(-1);
        int length = ref.path("query_location_length").asInt(0);
        if (location < 0 || location > Integer.MAX_VALUE || length <= 0) {
          throw SeException.invalid("table `%s`: time travel cannot be used here", written);
        }
        travel = new Travel(null, TimeTravel.spec(at, written), new Span((int) location, length, written, parts.size(), true));
      }
      if (!catalog.isEmpty() && !SqlAllowList.fold(catalog).equals(CATALOG)) {
        throw SeException.invalid("catalog `%s` is not available: the selected catalog is named default; "
            + "write nested namespaces as one quoted name, e.g. default.\"analytics.events\".page_views", catalog);
      }
      if (schema.isEmpty()) {
        if (table.contains(".") || table.contains("/") || table.contains(":") || table.contains("\\")) {
          // Only the last part of a path is shown: an error names no server directory.
          String shown = table.substring(Math.max(table.lastIndexOf('/'), table.lastIndexOf('\\')) + 1);
          throw SeException.invalid("`%s` is not a table of the selected catalog: reading files is not allowed", shown);
        }
        if (qualifiedMain) {
          throw SeException.invalid("table `%s` is ambiguous next to a table of namespace `main`: "
              + "write %s.%s (unqualified names read namespace %s)", table, DEFAULT_NAMESPACE, table, DEFAULT_NAMESPACE);
        }
        unqualified = true;
        TableName name = new TableName(UNQUALIFIED_SCHEMA, table, DEFAULT_NAMESPACE);
        add(ref, name, travel, written);
        return;
      }
      if (SqlAllowList.fold(schema).equals("information_schema")) {
        if (travel != null) {
          throw SeException.invalid("information_schema.%s cannot be read with time travel", table);
        }
        if (!INFORMATION_SCHEMA_VIEWS.contains(table.toLowerCase(Locale.ROOT))) {
          throw SeException.notFound("information_schema.%s does not exist: available are %s", table,
              String.join(", ", INFORMATION_SCHEMA_VIEWS));
        }
        long location = ref.path("query_location").asLong(-1);
        int length = ref.path("query_location_length").asInt(0);
        if (location < 0 || location > Integer.MAX_VALUE || length <= 0) {
          throw SeException.invalid("information_schema.%s cannot be used here", table);
        }
        informationSchema.add(new Span((int) location, length, table.toLowerCase(Locale.ROOT), catalog.isEmpty() ? 2 : 3));
        return;
      }
      String folded = SqlAllowList.fold(schema);
      if (DUCKDB_SCHEMAS.contains(folded) || folded.startsWith("__se")) {
        throw SeException.invalid("schema `%s` is not available", schema);
      }
      if (catalog.isEmpty() && folded.equals(CATALOG)) {
        throw SeException.invalid("table `%s` needs a namespace: write default.<namespace>.%s, or %s alone for "
            + "namespace %s", table, table, table, DEFAULT_NAMESPACE);
      }
      if (catalog.isEmpty() && DUCKDB_CATALOGS.contains(folded)) {
        throw SeException.invalid("`%s.%s` is ambiguous: %s is also a DuckDB catalog; write default.%s.%s for a "
            + "table of the selected catalog", schema, table, schema, SqlQuoting.identifier(schema), SqlQuoting.identifier(table));
      }
      if (folded.equals(UNQUALIFIED_SCHEMA)) {
        if (unqualified) {
          throw SeException.invalid("table `%s.%s` is ambiguous next to an unqualified table name (which reads "
              + "namespace %s): qualify every table", schema, table, DEFAULT_NAMESPACE);
        }
        qualifiedMain = true;
      }
      add(ref, new TableName(schema, table), travel, written);
    }

    private void add(JsonNode ref, TableName name, Travel at, String written) {
      String key = name.key();
      String metadata = MetadataTables.kind(name.table());
      if (metadata != null && at != null) {
        throw SeException.invalid("metadata table `%s` cannot be read with time travel", written);
      }
      if (at != null) {
        key = key + "\u001f@" + at.spec().key();
        travel.add(new Travel(key, at.spec(), at.span()));
      }
      if (metadata != null) {
        metadataTables.put(key, metadata);
      }
      tables.putIfAbsent(key, name);
      referenceCounts.merge(key, 1, Integer::sum);
      List<Comparison> found = whereByTableRef.get(ref);
      if (found != null) {
        filters.put(key, found);
      }
    }

    /** Records the end of each plain star of {@code select} that covers a tenant table of its FROM. */
    private void plainStars(JsonNode select) {
      List<String> qualifiers = new ArrayList<>();
      directTables(select.path("from_table"), qualifiers);
      if (qualifiers.isEmpty()) {
        return;
      }
      for (JsonNode item : select.path("select_list")) {
        if (!"STAR".equals(item.path("class").asText()) || item.path("exclude_list").size() > 0
            || item.path("replace_list").size() > 0 || item.path("rename_list").size() > 0
            || item.path("qualified_exclude_list").size() > 0 || item.path("columns").asBoolean(false)
            || !(item.path("expr").isNull() || item.path("expr").isMissingNode())) {
          continue;
        }
        String relation = item.path("relation_name").asText();
        long location = item.path("query_location").asLong(-1);
        int length = item.path("query_location_length").asInt(0);
        if ((relation.isEmpty() || qualifiers.contains(relation.toLowerCase(Locale.ROOT)))
            && location >= 0 && location + length <= Integer.MAX_VALUE && length > 0) {
          stars.add((int) (location + length));
        }
      }
    }

    /** The qualifiers (alias or name, lower case) of the tenant tables {@code ref} joins directly. */
    private void directTables(JsonNode ref, List<String> out) {
      String type = ref.path("type").asText();
      if ("JOIN".equals(type)) {
        directTables(ref.path("left"), out);
        directTables(ref.path("right"), out);
      } else if ("BASE_TABLE".equals(type) && !cteReferences.contains(ref)
          && !SqlAllowList.fold(ref.path("schema_name").asText()).equals("information_schema")
          && MetadataTables.kind(ref.path("table_name").asText()) == null) {
        String alias = ref.path("alias").asText();
        out.add((alias.isEmpty() ? ref.path("table_name").asText() : alias).toLowerCase(Locale.ROOT));
      }
    }

    private static List<String> nonEmpty(String... parts) {
      List<String> out = new ArrayList<>();
      for (String part : parts) {
        if (!part.isEmpty()) {
          out.add(part);
        }
      }
      return out;
    }

    /** Top-level AND-ed comparisons of a column of {@code ref} with a literal. */
    private static List<Comparison> comparisons(JsonNode where, JsonNode ref) {
      List<Comparison> out = new ArrayList<>();
      if (where == null || where.isNull() || where.isMissingNode()) {
        return out;
      }
      List<JsonNode> conjuncts = new ArrayList<>();
      flattenAnd(where, conjuncts);
      String alias = ref.path("alias").asText();
      String qualifier = alias.isEmpty() ? ref.path("table_name").asText() : alias;
      for (JsonNode conjunct : conjuncts) {
        if ("OPERATOR".equals(conjunct.path("class").asText()) && IN.equals(conjunct.path("type").asText())) {
          Comparison in = inList(conjunct, qualifier);
          if (in != null) {
            out.add(in);
          }
          continue;
        }
        if (!"COMPARISON".equals(conjunct.path("class").asText())) {
          continue;
        }
        String op = conjunct.path("type").asText();
        JsonNode left = conjunct.path("left");
        JsonNode right = conjunct.path("right");
        boolean flipped = false;
        if (isValue(left) && "COLUMN_REF".equals(right.path("class").asText())) {
          JsonNode tmp = left;
          left = right;
          right = tmp;
          flipped = true;
        }
        if (!"COLUMN_REF".equals(left.path("class").asText()) || !isValue(right)) {
          continue;
        }
        String column = columnOf(left, qualifier);
        if (column == null) {
          continue;
        }
        if ("PARAMETER".equals(right.path("class").asText())) {
          // Resolved to the bound value when the query is planned (see FilterPushdown#filter).
          out.add(new Comparison(column, flipped ? flip(op) : op, PARAMETER, right.path("identifier").asText()));
          continue;
        }
        JsonNode literal = right.path("literal");
        if (!literal.isObject() || literal.path("text").isMissingNode()) {
          continue;
        }
        out.add(new Comparison(column, flipped ? flip(op) : op, literal.path("kind").asText(), literal.path("text").asText()));
      }
      return out;
    }

    /** The column of {@code ref} a column reference names, or null (another table's, a nested field). */
    private static String columnOf(JsonNode columnRef, String qualifier) {
      JsonNode names = columnRef.path("column_names");
      if (names.size() == 1) {
        return names.get(0).asText();
      }
      if (names.size() == 2 && names.get(0).asText().equalsIgnoreCase(qualifier)) {
        return names.get(1).asText();
      }
      return null;
    }

    /** {@code column IN (values)} as a comparison ({@link #IN}), or null unless every value is a literal or parameter. */
    private static Comparison inList(JsonNode in, String qualifier) {
      JsonNode children = in.path("children");
      if (children.size() < 2 || !"COLUMN_REF".equals(children.get(0).path("class").asText())) {
        return null;
      }
      String column = columnOf(children.get(0), qualifier);
      if (column == null) {
        return null;
      }
      List<Comparison> values = new ArrayList<>();
      for (int i = 1; i < children.size(); i++) {
        JsonNode value = children.get(i);
        if ("PARAMETER".equals(value.path("class").asText())) {
          values.add(new Comparison(column, "COMPARE_EQUAL", PARAMETER, value.path("identifier").asText()));
          continue;
        }
        JsonNode literal = value.path("literal");
        if (!"CONSTANT".equals(value.path("class").asText()) || !literal.isObject()
            || literal.path("text").isMissingNode()) {
          return null;
        }
        values.add(new Comparison(column, "COMPARE_EQUAL", literal.path("kind").asText(), literal.path("text").asText()));
      }
      return new Comparison(column, IN, null, null, values);
    }

    private static boolean isValue(JsonNode node) {
      String clazz = node.path("class").asText();
      return "CONSTANT".equals(clazz) || "PARAMETER".equals(clazz);
    }

    private static void flattenAnd(JsonNode node, List<JsonNode> out) {
      if ("CONJUNCTION_AND".equals(node.path("type").asText())) {
        node.path("children").forEach(child -> flattenAnd(child, out));
      } else {
        out.add(node);
      }
    }

    private static String flip(String op) {
      switch (op) {
        case "COMPARE_LESSTHAN": return "COMPARE_GREATERTHAN";
        case "COMPARE_GREATERTHAN": return "COMPARE_LESSTHAN";
        case "COMPARE_LESSTHANOREQUALTO": return "COMPARE_GREATERTHANOREQUALTO";
        case "COMPARE_GREATERTHANOREQUALTO": return "COMPARE_LESSTHANOREQUALTO";
        default: return op;
      }
    }
  }

  /** The refusal for a statement DuckDB would not serialize (anything but a query). */
  static SeException refusedStatement(String statement) {
    String keyword = SqlText.refusedKeyword(statement);
    if (keyword.equals("BEGIN") || keyword.equals("COMMIT") || keyword.equals("ROLLBACK")
        || keyword.equals("START") || keyword.equals("TRANSACTION") || keyword.equals("ABORT") || keyword.equals("END")) {
      return SeException.invalid("%s is not allowed: queries are read-only and run without transactions", keyword);
    }
    return new SeException(ErrorCode.INVALID_ARGUMENT,
        String.format("%s statements are not allowed: only read-only queries (SELECT, DESCRIBE, SHOW) are accepted", keyword));
  }
}
