package io.storageengine.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.SeException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link ResultPrinter}: the same values in table, CSV and JSON lines; how each shows NULL. */
class ResultPrinterTest {
  private final BufferAllocator allocator = new RootAllocator();
  private VectorSchemaRoot root;

  /** Row 1 has a value everywhere; row 2 an empty string and NULLs; row 3 the text "NULL". */
  @BeforeEach
  void rows() {
    IntVector id = new IntVector("id", allocator);
    VarCharVector s = new VarCharVector("s", allocator);
    VarBinaryVector b = new VarBinaryVector("b", allocator);
    TimeStampMicroTZVector ts = new TimeStampMicroTZVector("ts", allocator, "UTC");
    DateDayVector d = new DateDayVector("d", allocator);
    TimeMicroVector t = new TimeMicroVector("t", allocator);
    ListVector l = ListVector.empty("l", allocator);
    for (var v : List.of(id, s, b, ts, d, t)) {
      v.allocateNew();
    }
    id.set(0, 1);
    id.set(1, 2);
    id.set(2, 3);
    s.setSafe(0, bytes("a,\"b\""));
    s.setSafe(1, bytes(""));
    s.setSafe(2, bytes("NULL"));
    b.setSafe(0, new byte[] {0x00, (byte) 0xff});
    b.setNull(1);
    b.setNull(2);
    ts.set(0, 1_767_323_045_123_456L); // 2026-01-02T03:04:05.123456Z
    ts.setNull(1);
    ts.setNull(2);
    d.set(0, (int) LocalDate.parse("2026-01-02").toEpochDay());
    d.setNull(1);
    d.setNull(2);
    t.set(0, 36_000_500_000L); // 10:00:00.5
    t.setNull(1);
    t.setNull(2);
    UnionListWriter writer = l.getWriter();
    writer.setPosition(0);
    writer.startList();
    writer.integer().writeInt(7);
    writer.integer().writeInt(8);
    writer.endList();
    l.setNull(1);
    l.setNull(2);
    for (var v : List.of(id, s, b, ts, d, t, l)) {
      v.setValueCount(3);
    }
    root = new VectorSchemaRoot(List.of(id, s, b, ts, d, t, l));
    root.setRowCount(3);
  }

  @AfterEach
  void close() {
    root.close();
    assertThat(allocator.getAllocatedMemory()).isZero();
    allocator.close();
  }

  @Test
  void tableAlignsColumnsAndShowsNullAsNull() {
    assertThat(print("table", null)).isEqualTo("""
        +----+-------+------+-----------------------------+------------+------------+-------+
        | id | s     | b    | ts                          | d          | t          | l     |
        +----+-------+------+-----------------------------+------------+------------+-------+
        | 1  | a,"b" | 00ff | 2026-01-02T03:04:05.123456Z | 2026-01-02 | 10:00:00.5 | [7,8] |
        | 2  |       | NULL | NULL                        | NULL       | NULL       | NULL  |
        | 3  | NULL  | NULL | NULL                        | NULL       | NULL       | NULL  |
        +----+-------+------+-----------------------------+------------+------------+-------+
        3 rows
        """);
  }

  @Test
  void csvQuotesWhatWouldBeMisreadAndLeavesNullEmpty() {
    assertThat(print("csv", null)).isEqualTo("""
        id,s,b,ts,d,t,l
        1,"a,""b""\",00ff,2026-01-02T03:04:05.123456Z,2026-01-02,10:00:00.5,"[7,8]"
        2,"",,,,,
        3,NULL,,,,,
        """);
  }

  @Test
  void csvWithANullStringQuotesTheTextThatReadsAsIt() {
    assertThat(print("csv", "NULL")).isEqualTo("""
        id,s,b,ts,d,t,l
        1,"a,""b""\",00ff,2026-01-02T03:04:05.123456Z,2026-01-02,10:00:00.5,"[7,8]"
        2,"",NULL,NULL,NULL,NULL,NULL
        3,"NULL",NULL,NULL,NULL,NULL,NULL
        """);
  }

  @Test
  void jsonLinesKeepNumbersAndNestedValuesAndWriteNull() {
    assertThat(print("json", null)).isEqualTo("""
        {"id":1,"s":"a,\\"b\\"","b":"00ff","ts":"2026-01-02T03:04:05.123456Z","d":"2026-01-02","t":"10:00:00.5","l":[7,8]}
        {"id":2,"s":"","b":null,"ts":null,"d":null,"t":null,"l":null}
        {"id":3,"s":"NULL","b":null,"ts":null,"d":null,"t":null,"l":null}
        """);
  }

  @Test
  void anEmptyResultStillHasItsHeader() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    ResultPrinter printer = ResultPrinter.of("csv", new PrintStream(bytes, true, StandardCharsets.UTF_8), null);
    printer.begin(root.getSchema());
    printer.end();
    assertThat(bytes.toString(StandardCharsets.UTF_8)).isEqualTo("id,s,b,ts,d,t,l\n");
  }

  @Test
  void unknownFormatsAndANullStringOutsideCsvAreRefused() {
    PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    assertThatThrownBy(() -> ResultPrinter.of("xml", out, null))
        .isInstanceOf(SeException.class)
        .hasMessage("--format: expected table, csv or json, got 'xml'");
    assertThatThrownBy(() -> ResultPrinter.of("json", out, "NULL"))
        .isInstanceOf(SeException.class)
        .hasMessage("--null-string applies to --format csv only, not json");
  }

  private String print(String format, String nullString) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    ResultPrinter printer = ResultPrinter.of(format, new PrintStream(bytes, true, StandardCharsets.UTF_8), nullString);
    printer.begin(root.getSchema());
    printer.batch(root);
    printer.end();
    return bytes.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n");
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
