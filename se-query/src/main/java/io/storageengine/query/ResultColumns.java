package io.storageengine.query;

import com.fasterxml.jackson.databind.JsonNode;
import io.storageengine.query.StatementAnalyzer.TableName;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.types.Types;

/**
 * Which result columns of a query are plain references to a table column, so the result schema
 * can say what the table says: not nullable for a required column, and the column's catalog,
 * schema and table in its Flight SQL column metadata.
 *
 * <p>Only the unambiguous case is recognized: a top-level {@code SELECT} without CTEs over one
 * tenant table (no join, no subquery, no column renames in {@code FROM}), whose select items are
 * a bare {@code *} or column references ({@code c}, {@code t.c}, {@code alias.c}, with or
 * without {@code AS}). Every other item has no origin. When the result DuckDB reports does not
 * line up with the select list (count or types), no column has an origin.
 */
final class ResultColumns {
  /** What one select item is, syntactically: a column name, {@code *} (all columns), or null. */
  record Select(TableName table, List<String> items) {
    static final String ALL = "\u0000*";
  }

  /** A result column that reads a table column as it is. */
  record Origin(String namespace, String table, Types.NestedField column) {}

  private ResultColumns() {}

  /** The select list of {@code statement} (DuckDB's parse), or null when it is not the recognized shape. */
  static Select select(JsonNode statement, Map<String, TableName> tables) {
    JsonNode node = statement.path("node");
    if (!"SELECT_NODE".equals(node.path("type").asText()) || node.path("cte_map").path("map").size() > 0) {
      return null;
    }
    JsonNode from = node.path("from_table");
    if (!"BASE_TABLE".equals(from.path("type").asText()) || from.path("column_name_alias").size() > 0
        || tables.size() != 1) {
      return null;
    }
    TableName table = tables.values().iterator().next();
    if (!from.path("table_name").asText().equalsIgnoreCase(table.table())) {
      return null;
    }
    String alias = from.path("alias").asText();
    String qualifier = alias.isEmpty() ? table.table() : alias;
    List<String> items = new ArrayList<>();
    for (JsonNode item : node.path("select_list")) {
      String kind = item.path("class").asText();
      if ("STAR".equals(kind)) {
        boolean plain = item.path("relation_name").asText().isEmpty()
            || item.path("relation_name").asText().equalsIgnoreCase(qualifier);
        if (!plain || item.path("exclude_list").size() > 0 || item.path("replace_list").size() > 0
            || item.path("rename_list").size() > 0 || item.path("columns").asBoolean(false)
            || !(item.path("expr").isNull() || item.path("expr").isMissingNode())) {
          return null;
        }
        items.add(Select.ALL);
      } else if ("COLUMN_REF".equals(kind)) {
        JsonNode names = item.path("column_names");
        if (names.size() == 1) {
          items.add(names.get(0).asText());
        } else if (names.size() == 2 && names.get(0).asText().equalsIgnoreCase(qualifier)) {
          items.add(names.get(1).asText());
        } else {
          items.add(null);
        }
      } else {
        items.add(null);
      }
    }
    return new Select(table, java.util.Collections.unmodifiableList(items));
  }

  /**
   * The origin of each result column, for a {@code select} over a table read with
   * {@code schema}; empty when {@code select} is null.
   */
  static List<Origin> origins(Select select, org.apache.iceberg.Schema schema) {
    if (select == null || schema == null) {
      return List.of();
    }
    List<Origin> origins = new ArrayList<>();
    for (String item : select.items()) {
      if (Select.ALL.equals(item)) {
        for (Types.NestedField column : schema.columns()) {
          origins.add(new Origin(select.table().namespace(), select.table().table(), column));
        }
      } else if (item == null) {
        origins.add(null);
      } else {
        Types.NestedField column = schema.caseInsensitiveFindField(item);
        origins.add(column != null && schema.columns().contains(column)
            ? new Origin(select.table().namespace(), select.table().table(), column) : null);
      }
    }
    return java.util.Collections.unmodifiableList(origins);
  }

  /**
   * {@code result} (the schema DuckDB produced) with what the origins tell: a column reading a
   * required table column that never reads as NULL is not nullable and names its table; every
   * column gets its type name ({@code duckdbTypes}, DuckDB's) and, for decimals, precision and
   * scale. Values and Arrow types are unchanged.
   */
  static Schema annotate(Schema result, List<Origin> origins, List<String> duckdbTypes) {
    List<Field> fields = result.getFields();
    boolean lined = origins.size() == fields.size();
    for (int i = 0; lined && i < fields.size(); i++) {
      Origin origin = origins.get(i);
      lined = origin == null
          || sameType(fields.get(i), IcebergTypes.arrowField(origin.column().name(), origin.column().type()));
    }
    List<Field> out = new ArrayList<>();
    for (int i = 0; i < fields.size(); i++) {
      Field field = fields.get(i);
      Origin origin = lined ? origins.get(i) : null;
      Map<String, String> metadata;
      boolean nullable = field.isNullable();
      ArrowType type = field.getType();
      if (origin != null) {
        metadata = IcebergTypes.columnMetadata(origin.namespace(), origin.table(), origin.column().name(),
            origin.column().type());
        nullable = nullable && !neverNull(origin.column());
        if (origin.column().type() instanceof Types.FixedType fixed) {
          // DuckDB reads fixed(n) as BLOB; the stream sends it as the table declares it (see fixedSize).
          type = new ArrowType.FixedSizeBinary(fixed.length());
        }
      } else {
        metadata = resultMetadata(field, i < duckdbTypes.size() ? duckdbTypes.get(i) : null);
      }
      out.add(new Field(field.getName(), new FieldType(nullable, type, field.getDictionary(), metadata),
          field.getChildren()));
    }
    return new Schema(out, result.getCustomMetadata());
  }

  /**
   * The vectors to send for a batch DuckDB produced in {@code produced} under {@code schema}
   * (from {@link #annotate}): DuckDB's own vectors, except a {@code fixed(n)} column, which is
   * copied into a {@code FixedSizeBinary(n)} vector on each {@link Sender#load}.
   */
  static final class Sender implements AutoCloseable {
    private final org.apache.arrow.vector.VectorSchemaRoot produced;
    private final org.apache.arrow.vector.VectorSchemaRoot root;
    private final List<org.apache.arrow.vector.FixedSizeBinaryVector> copies = new ArrayList<>();
    private final List<org.apache.arrow.vector.VarBinaryVector> sources = new ArrayList<>();

    Sender(org.apache.arrow.vector.VectorSchemaRoot produced, Schema schema,
        org.apache.arrow.memory.BufferAllocator allocator) {
      this.produced = produced;
      List<org.apache.arrow.vector.FieldVector> vectors = new ArrayList<>();
      for (int i = 0; i < schema.getFields().size(); i++) {
        Field field = schema.getFields().get(i);
        org.apache.arrow.vector.FieldVector vector = produced.getVector(i);
        if (field.getType() instanceof ArrowType.FixedSizeBinary
            && vector instanceof org.apache.arrow.vector.VarBinaryVector binary) {
          org.apache.arrow.vector.FixedSizeBinaryVector copy =
              (org.apache.arrow.vector.FixedSizeBinaryVector) field.createVector(allocator);
          copies.add(copy);
          sources.add(binary);
          vector = copy;
        }
        vectors.add(vector);
      }
      this.root = new org.apache.arrow.vector.VectorSchemaRoot(schema, vectors, 0);
    }

    /** The root to start the stream with; its vectors are DuckDB's or owned by this sender. */
    org.apache.arrow.vector.VectorSchemaRoot root() {
      return root;
    }

    /** Makes {@link #root} hold the batch just loaded into the produced root. */
    void load() {
      int rows = produced.getRowCount();
      for (int c = 0; c < copies.size(); c++) {
        org.apache.arrow.vector.FixedSizeBinaryVector copy = copies.get(c);
        org.apache.arrow.vector.VarBinaryVector source = sources.get(c);
        copy.reset();
        for (int r = 0; r < rows; r++) {
          byte[] value = source.getObject(r);
          if (value == null) {
            copy.setNull(r);
          } else if (value.length != copy.getByteWidth()) {
            throw io.storageengine.common.SeException.internal(String.format(
                "column `%s`: a value of %d bytes in a fixed(%d) column", copy.getName(), value.length,
                copy.getByteWidth()), null);
          } else {
            copy.setSafe(r, value);
          }
        }
        copy.setValueCount(rows);
      }
      root.setRowCount(rows);
    }

    @Override
    public void close() {
      copies.forEach(org.apache.arrow.vector.FixedSizeBinaryVector::close);
    }
  }

  /** A required column never reads as NULL, unless it was added with a default the reader reads as NULL. */
  private static boolean neverNull(Types.NestedField column) {
    return column.isRequired() && (column.initialDefault() == null || !"NULL".equals(IcebergTypes.defaultLiteral(column)));
  }

  private static boolean sameType(Field actual, Field expected) {
    if (!actual.getType().equals(expected.getType()) || actual.getChildren().size() != expected.getChildren().size()) {
      return false;
    }
    for (int i = 0; i < actual.getChildren().size(); i++) {
      if (!sameType(actual.getChildren().get(i), expected.getChildren().get(i))) {
        return false;
      }
    }
    return true;
  }

  private static Map<String, String> resultMetadata(Field field, String duckdbType) {
    org.apache.arrow.flight.sql.FlightSqlColumnMetadata.Builder metadata =
        new org.apache.arrow.flight.sql.FlightSqlColumnMetadata.Builder().isReadOnly(true);
    if (duckdbType != null) {
      metadata.typeName(duckdbType);
    }
    if (field.getType() instanceof ArrowType.Decimal decimal) {
      metadata.precision(decimal.getPrecision()).scale(decimal.getScale());
    }
    return metadata.build().getMetadataMap();
  }
}
