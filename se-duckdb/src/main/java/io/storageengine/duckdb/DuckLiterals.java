package io.storageengine.duckdb;

import io.storageengine.common.SeException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HexFormat;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * DuckDB SQL literals for Iceberg values in Iceberg's internal representation (what
 * {@link Types.NestedField#initialDefault()} and {@link Types.NestedField#writeDefault()}
 * return): dates as days, times and timestamps as micros (or nanos for the {@code _ns} types),
 * binary and fixed as {@link ByteBuffer}. Each literal is cast to the column's DuckDB type
 * ({@link DuckTypes}), so it can stand wherever a value of the column can.
 */
public final class DuckLiterals {
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSSSSS");
  private static final DateTimeFormatter TIMESTAMP = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSSSSSSSS");

  private DuckLiterals() {}

  /**
   * The literal of {@code value} (non-null) of primitive {@code type}, e.g.
   * {@code CAST('2026-01-02 03:04:05.123456789+00' AS TIMESTAMPTZ_NS)}; {@code null} when
   * {@code type} is not a primitive DuckDB holds.
   */
  public static String of(Type type, Object value) {
    if (type.typeId() == Type.TypeID.FIXED || type.typeId() == Type.TypeID.BINARY) {
      ByteBuffer bytes = ((ByteBuffer) value).duplicate();
      byte[] out = new byte[bytes.remaining()];
      bytes.get(out);
      return "unhex(" + SqlQuoting.literal(HexFormat.of().formatHex(out)) + ")";
    }
    String text = switch (type.typeId()) {
      case BOOLEAN, INTEGER, LONG, FLOAT, DOUBLE, STRING, UUID -> value.toString();
      case DECIMAL -> ((BigDecimal) value).toPlainString();
      case DATE -> LocalDate.ofEpochDay(((Number) value).longValue()).toString();
      case TIME -> TIME.format(LocalTime.ofNanoOfDay(((Number) value).longValue() * 1_000L));
      case TIMESTAMP -> timestamp(((Number) value).longValue(), 1_000_000L,
          ((Types.TimestampType) type).shouldAdjustToUTC());
      case TIMESTAMP_NANO -> timestamp(((Number) value).longValue(), 1_000_000_000L,
          ((Types.TimestampNanoType) type).shouldAdjustToUTC());
      default -> null;
    };
    if (text == null) {
      return null;
    }
    String duckType = DuckTypes.of("", type, (column, unsupported) -> SeException.internal(
        "no DuckDB type for " + unsupported, null));
    return "CAST(" + SqlQuoting.literal(text) + " AS " + duckType + ")";
  }

  private static String timestamp(long value, long perSecond, boolean utc) {
    Instant instant = Instant.ofEpochSecond(Math.floorDiv(value, perSecond),
        Math.floorMod(value, perSecond) * (1_000_000_000L / perSecond));
    String local = TIMESTAMP.format(LocalDateTime.ofInstant(instant, ZoneOffset.UTC));
    return utc ? local + "+00" : local;
  }
}
