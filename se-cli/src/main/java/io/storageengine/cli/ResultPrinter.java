package io.storageengine.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/** Prints query results; one printer per output format. */
abstract class ResultPrinter {
  protected final PrintStream out;
  protected List<String> names = new ArrayList<>();

  ResultPrinter(PrintStream out) {
    this.out = out;
  }

  static ResultPrinter of(String format, PrintStream out) {
    return switch (format) {
      case "table" -> new Table(out);
      case "csv" -> new Csv(out);
      case "json" -> new JsonLines(out);
      default -> throw SeException.invalid("--format: expected table, csv or json, got '%s'", format);
    };
  }

  void begin(Schema schema) {
    if (schema != null) {
      for (Field f : schema.getFields()) {
        names.add(f.getName());
      }
    }
  }

  abstract void batch(VectorSchemaRoot root);

  abstract void end();

  protected void namesFrom(VectorSchemaRoot root) {
    if (names.isEmpty()) {
      for (Field f : root.getSchema().getFields()) {
        names.add(f.getName());
      }
    }
  }

  /** A value as text: null as NULL, timestamps as ISO-8601, bytes as hex. */
  static String text(FieldVector v, int row) {
    if (v.isNull(row)) {
      return null;
    }
    if (v instanceof TimeStampVector ts) {
      Object o = ts.getObject(row);
      ArrowType.Timestamp type = (ArrowType.Timestamp) ts.getField().getType();
      if (o instanceof java.time.LocalDateTime ldt && type.getTimezone() != null) {
        return ldt.atOffset(java.time.ZoneOffset.UTC).toString();
      }
      if (o instanceof Long micros) {
        return java.time.Instant.EPOCH.plus(micros, java.time.temporal.ChronoUnit.MICROS).toString();
      }
      return String.valueOf(o);
    }
    if (v instanceof VarBinaryVector b) {
      return HexFormat.of().formatHex(b.get(row));
    }
    if (v instanceof FixedSizeBinaryVector b) {
      return HexFormat.of().formatHex(b.get(row));
    }
    return String.valueOf(v.getObject(row));
  }

  static final class Table extends ResultPrinter {
    private final List<String[]> rows = new ArrayList<>();

    Table(PrintStream out) {
      super(out);
    }

    @Override
    void batch(VectorSchemaRoot root) {
      namesFrom(root);
      for (int r = 0; r < root.getRowCount(); r++) {
        String[] row = new String[root.getFieldVectors().size()];
        for (int c = 0; c < row.length; c++) {
          String t = text(root.getVector(c), r);
          row[c] = t == null ? "NULL" : t;
        }
        rows.add(row);
      }
    }

    @Override
    void end() {
      int[] widths = new int[names.size()];
      for (int c = 0; c < widths.length; c++) {
        widths[c] = names.get(c).length();
        for (String[] row : rows) {
          widths[c] = Math.max(widths[c], row[c].length());
        }
      }
      StringBuilder rule = new StringBuilder("+");
      for (int w : widths) {
        rule.append("-".repeat(w + 2)).append('+');
      }
      out.println(rule);
      out.println(line(names.toArray(String[]::new), widths));
      out.println(rule);
      for (String[] row : rows) {
        out.println(line(row, widths));
      }
      out.println(rule);
      out.println(rows.size() + (rows.size() == 1 ? " row" : " rows"));
    }

    private static String line(String[] cells, int[] widths) {
      StringBuilder sb = new StringBuilder("|");
      for (int c = 0; c < widths.length; c++) {
        sb.append(' ').append(cells[c]).append(" ".repeat(widths[c] - cells[c].length())).append(" |");
      }
      return sb.toString();
    }
  }

  static final class Csv extends ResultPrinter {
    private boolean headerDone;

    Csv(PrintStream out) {
      super(out);
    }

    @Override
    void begin(Schema schema) {
      super.begin(schema);
      if (!names.isEmpty()) {
        header();
      }
    }

    private void header() {
      out.println(String.join(",", names.stream().map(Csv::quote).toList()));
      headerDone = true;
    }

    @Override
    void batch(VectorSchemaRoot root) {
      namesFrom(root);
      if (!headerDone) {
        header();
      }
      for (int r = 0; r < root.getRowCount(); r++) {
        StringBuilder sb = new StringBuilder();
        for (int c = 0; c < root.getFieldVectors().size(); c++) {
          String t = text(root.getVector(c), r);
          sb.append(c == 0 ? "" : ",").append(t == null ? "" : quote(t));
        }
        out.println(sb);
      }
    }

    private static String quote(String s) {
      if (s.contains(",") || s.contains("\"") || s.contains("\n") || s.contains("\r")) {
        return '"' + s.replace("\"", "\"\"") + '"';
      }
      return s;
    }

    @Override
    void end() {
      if (!headerDone) {
        header();
      }
    }
  }

  /** One JSON object per row. */
  static final class JsonLines extends ResultPrinter {
    JsonLines(PrintStream out) {
      super(out);
    }

    @Override
    void batch(VectorSchemaRoot root) {
      namesFrom(root);
      for (int r = 0; r < root.getRowCount(); r++) {
        ObjectNode row = Json.object();
        for (int c = 0; c < root.getFieldVectors().size(); c++) {
          FieldVector v = root.getVector(c);
          String name = names.get(c);
          if (v.isNull(r)) {
            row.putNull(name);
            continue;
          }
          Object o = v.getObject(r);
          if (o instanceof Number || o instanceof Boolean) {
            row.set(name, Json.MAPPER.valueToTree(o));
          } else if (o instanceof java.util.List<?> || o instanceof java.util.Map<?, ?>) {
            row.set(name, Json.MAPPER.valueToTree(o.toString()));
          } else {
            row.put(name, text(v, r));
          }
        }
        out.println(Json.toString(row));
      }
    }

    @Override
    void end() {}
  }
}
