package io.storageengine.duckdb;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** Each literal, evaluated by DuckDB, is the Iceberg value with the column's DuckDB type. */
class DuckLiteralsTest {
  private record Case(Type type, Object value, String text) {}

  @Test
  void everyPrimitiveDefaultEvaluatesToItsValue() throws Exception {
    Map<String, Case> cases = new LinkedHashMap<>();
    cases.put("b", new Case(Types.BooleanType.get(), true, "true"));
    cases.put("i", new Case(Types.IntegerType.get(), -7, "-7"));
    cases.put("l", new Case(Types.LongType.get(), 9_000_000_000L, "9000000000"));
    cases.put("f", new Case(Types.FloatType.get(), 1.5f, "1.5"));
    cases.put("d", new Case(Types.DoubleType.get(), 2.25, "2.25"));
    cases.put("dec", new Case(Types.DecimalType.of(10, 2), new BigDecimal("-12.30"), "-12.30"));
    cases.put("s", new Case(Types.StringType.get(), "it's", "it's"));
    cases.put("u", new Case(Types.UUIDType.get(), UUID.fromString("123e4567-e89b-12d3-a456-426614174000"),
        "123e4567-e89b-12d3-a456-426614174000"));
    cases.put("dt", new Case(Types.DateType.get(), literal("1900-01-01", Types.DateType.get()), "1900-01-01"));
    cases.put("t", new Case(Types.TimeType.get(), literal("10:11:12.000001", Types.TimeType.get()), "10:11:12.000001"));
    cases.put("ts", new Case(Types.TimestampType.withoutZone(),
        literal("1969-12-31T23:59:59.999999", Types.TimestampType.withoutZone()), "1969-12-31 23:59:59.999999"));
    cases.put("tstz", new Case(Types.TimestampType.withZone(),
        literal("2026-01-02T03:04:05.5+02:00", Types.TimestampType.withZone()), "2026-01-02 01:04:05.5+00"));
    cases.put("tsn", new Case(Types.TimestampNanoType.withoutZone(),
        literal("2026-01-02T03:04:05.000000001", Types.TimestampNanoType.withoutZone()), "2026-01-02 03:04:05.000000001"));
    cases.put("tstzn", new Case(Types.TimestampNanoType.withZone(),
        literal("1969-12-31T23:59:59.999999999Z", Types.TimestampNanoType.withZone()), "1969-12-31 23:59:59.999999999+00"));
    cases.put("bin", new Case(Types.BinaryType.get(), ByteBuffer.wrap(new byte[] {(byte) 0xca, 0x0f}), "\\xCA\\x0F"));
    cases.put("fx", new Case(Types.FixedType.ofLength(1), ByteBuffer.wrap(new byte[] {0}), "\\x00"));

    try (Connection connection = DriverManager.getConnection("jdbc:duckdb:");
        Statement statement = connection.createStatement()) {
      statement.execute("SET TimeZone = 'UTC'");
      for (Map.Entry<String, Case> c : cases.entrySet()) {
        String literal = DuckLiterals.of(c.getValue().type(), c.getValue().value());
        try (ResultSet rs = statement.executeQuery("SELECT CAST(v AS VARCHAR), typeof(v) FROM (SELECT " + literal + " AS v)")) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getString(1)).as(c.getKey() + ": " + literal).isEqualTo(c.getValue().text());
          assertThat(rs.getString(2)).as(c.getKey()).isEqualTo(DuckTypes.of(c.getKey(), c.getValue().type(),
              (column, type) -> io.storageengine.common.SeException.internal("unsupported", null)).replace("TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE")
              .replace("TIMESTAMP WITH TIME ZONE_NS", "TIMESTAMPTZ_NS"));
        }
      }
    }
    assertThat(DuckLiterals.of(Types.ListType.ofOptional(1, Types.IntegerType.get()), java.util.List.of())).isNull();
  }

  private static Object literal(String text, Type type) {
    Literal<Object> literal = Literal.of(text).to(type);
    return literal.value();
  }
}
