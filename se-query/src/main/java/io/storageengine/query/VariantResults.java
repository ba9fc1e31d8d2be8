package io.storageengine.query;

import io.storageengine.duckdb.SqlQuoting;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;

/**
 * Variant values in query results: a top-level result column of DuckDB type {@code VARIANT} is
 * sent as its JSON text (Arrow utf8), the form every Flight SQL client can show. Path extraction
 * and filters work on the VARIANT inside the query ({@code doc.a.b}, {@code variant_extract},
 * {@code doc::JSON ->> '$.a'}); only the values that leave the engine are turned into JSON.
 */
final class VariantResults {
  private VariantResults() {}

  /** Whether {@code schema} has a variant or a geometry anywhere (a column or a nested field). */
  static boolean holdsVariant(Schema schema) {
    return !TypeUtil.indexById(schema.asStruct()).values().stream()
        .filter(field -> field.type().typeId() == Type.TypeID.VARIANT
            || field.type().typeId() == Type.TypeID.GEOMETRY).toList().isEmpty();
  }

  /**
   * {@code sql} with every top-level VARIANT result column cast to JSON and every GEOMETRY one
   * turned into WKB, under its own name, or
   * {@code sql} itself when it has none (or DuckDB cannot describe it before it is bound).
   */
  static String asJson(Connection connection, String sql) throws SQLException {
    List<String> columns = new ArrayList<>();
    boolean any = false;
    try (PreparedStatement statement = connection.prepareStatement(sql)) {
      ResultSetMetaData metadata = statement.getMetaData();
      if (metadata == null) {
        return sql;
      }
      for (int i = 1; i <= metadata.getColumnCount(); i++) {
        String type = metadata.getColumnTypeName(i);
        boolean variant = "VARIANT".equals(type);
        boolean geometry = type != null && type.startsWith("GEOMETRY");
        any |= variant || geometry;
        String value = variant ? "CAST(#" + i + " AS JSON)" : geometry ? "ST_AsWKB(#" + i + ")" : "#" + i;
        columns.add(value + " AS " + SqlQuoting.identifier(metadata.getColumnName(i)));
      }
    }
    if (!any) {
      return sql;
    }
    return "SELECT " + String.join(", ", columns) + " FROM (" + sql + "\n) AS __se_variant";
  }
}
