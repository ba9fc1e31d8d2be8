package io.storageengine.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.io.PrintStream;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Prints query results; one printer per output format. Every format writes a value the same way
 * (see {@link #text}); they differ in how they show NULL: {@code NULL} in a table, JSON
 * {@code null}, and in CSV the null string (default: an empty cell) while an empty string is a
 * quoted {@code ""}.
 */
abstract class ResultPrinter {
  private static final DateTimeFormatter ISO_TIME = DateTimeFormatter.ISO_LOCAL_TIME;
  private static final DateTimeFormatter ISO_DATE_TIME = DateTimeFormatter.ISO_LOCAL_DATE_TIME;
  protected final PrintStream out;
  protected List<String> names = new ArrayList<>();

  ResultPrinter(PrintStream out) {
    this.out = out;
  }

  /** {@code nullString}: CSV only, the text of a NULL cell (null: the empty cell). */
  static ResultPrinter of(String format, PrintStream out, String nullString) {
    if (nullString != null && !format.equals("csv")) {
      throw SeException.invalid("--null-string applies to --format csv only, not %s", format);
    }
    return switch (format) {
      case "table" -> new Table(out);
      case "csv" -> new Csv(out, nullString == null ? "" : nullString);
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

  /**
   * A value as text, null for SQL NULL: dates, times and timestamps as ISO-8601 (a timestamp with
   * a time zone in UTC with {@code Z}; as many fraction digits as the value has, up to
   * nanoseconds), bytes as lower-case hex, lists, structs and maps as JSON.
   */
  static String text(FieldVector v, int row) {
    if (v.isNull(row)) {
      return null;
    }
    String temporal = temporal(v, row);
    if (temporal != null) {
      return temporal;
    }
    if (v instanceof VarBinaryVector b) {
      return HexFormat.of().formatHex(b.get(row));
    }
    if (v instanceof FixedSizeBinaryVector b) {
      return HexFormat.of().formatHex(b.get(row));
    }
    if (v instanceof ListVector || v instanceof StructVector) {
      return Json.toString(json(v, row));
    }
    return String.valueOf(v.getObject(row));
  }

  /** A date, time or timestamp as ISO-8601; null when {@code v} holds none of these. */
  private static String temporal(FieldVector v, int row) {
    if (v instanceof DateDayVector d) {
      return LocalDate.ofEpochDay(d.get(row)).toString();
    }
    if (v instanceof DateMilliVector d) {
      return LocalDate.ofEpochDay(Math.floorDiv(d.get(row), 86_400_000L)).toString();
    }
    if (v instanceof TimeSecVector t) {
      return ISO_TIME.format(LocalTime.ofSecondOfDay(t.get(row)));
    }
    if (v instanceof TimeMilliVector t) {
      return ISO_TIME.format(LocalTime.ofNanoOfDay(t.get(row) * 1_000_000L));
    }
    if (v instanceof TimeMicroVector t) {
      return ISO_TIME.format(LocalTime.ofNanoOfDay(t.get(row) * 1_000L));
    }
    if (v instanceof TimeNanoVector t) {
      return ISO_TIME.format(LocalTime.ofNanoOfDay(t.get(row)));
    }
    if (v instanceof TimeStampVector ts) {
      ArrowType.Timestamp type = (ArrowType.Timestamp) ts.getField().getType();
      long value = ts.get(row);
      Instant instant = switch (type.getUnit()) {
        case SECOND -> Instant.ofEpochSecond(value);
        case MILLISECOND -> Instant.ofEpochMilli(value);
        case MICROSECOND -> Instant.ofEpochSecond(Math.floorDiv(value, 1_000_000L), Math.floorMod(value, 1_000_000L) * 1_000L);
        case NANOSECOND -> Instant.ofEpochSecond(Math.floorDiv(value, 1_000_000_000L), Math.floorMod(value, 1_000_000_000L));
      };
      LocalDateTime utc = LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
      return ISO_DATE_TIME.format(utc) + (type.getTimezone() != null ? "Z" : "");
    }
    return null;
  }

  /** A value as JSON: numbers and booleans as such, nested values recursively, the rest as {@link #text}. */
  static JsonNode json(FieldVector v, int row) {
    if (v.isNull(row)) {
      return NullNode.getInstance();
    }
    if (v instanceof MapVector map) {
      StructVector entries = (StructVector) map.getDataVector();
      FieldVector keys = (FieldVector) entries.getChildByOrdinal(0);
      FieldVector values = (FieldVector) entries.getChildByOrdinal(1);
      boolean textKeys = keys instanceof VarCharVector;
      ObjectNode object = Json.object();
      ArrayNode pairs = Json.MAPPER.createArrayNode();
      for (int i = map.getElementStartIndex(row); i < map.getElementEndIndex(row); i++) {
        if (textKeys) {
          object.set(text(keys, i), json(values, i));
        } else {
          ObjectNode pair = Json.object();
          pair.set("key", json(keys, i));
          pair.set("value", json(values, i));
          pairs.add(pair);
        }
      }
      return textKeys ? object : pairs;
    }
    if (v instanceof ListVector list) {
      FieldVector child = list.getDataVector();
      ArrayNode array = Json.MAPPER.createArrayNode();
      for (int i = list.getElementStartIndex(row); i < list.getElementEndIndex(row); i++) {
        array.add(json(child, i));
      }
      return array;
    }
    if (v instanceof StructVector struct) {
      ObjectNode object = Json.object();
      for (FieldVector child : struct.getChildrenFromFields()) {
        object.set(child.getName(), json(child, row));
      }
      return object;
    }
    if (temporal(v, row) == null) {
      Object o = v.getObject(row);
      if (o instanceof Number || o instanceof Boolean) {
        return Json.MAPPER.valueToTree(o);
      }
    }
    return TextNode.valueOf(text(v, row));
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
    private final String nullString;
    private boolean headerDone;

    Csv(PrintStream out, String nullString) {
      super(out);
      this.nullString = nullString;
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
          sb.append(c == 0 ? "" : ",").append(t == null ? nullString : cell(t));
        }
        out.println(sb);
      }
    }

    /** A value's cell: quoted when it is empty or reads as the null string, so neither is taken for NULL. */
    private String cell(String s) {
      return s.isEmpty() || s.equals(nullString) ? '"' + s.replace("\"", "\"\"") + '"' : quote(s);
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
          row.set(names.get(c), json(root.getVector(c), r));
        }
        out.println(Json.toString(row));
      }
    }

    @Override
    void end() {}
  }
}
