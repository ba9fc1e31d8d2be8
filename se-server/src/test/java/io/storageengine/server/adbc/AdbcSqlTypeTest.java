package io.storageengine.server.adbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.adbc.core.AdbcStatement;
import org.apache.arrow.adbc.driver.testsuite.AbstractSqlTypeTest;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

class AdbcSqlTypeTest extends AbstractSqlTypeTest {
  private static EngineQuirks engine;

  @BeforeAll
  static void startEngine() throws Exception {
    engine = new EngineQuirks();
    quirks = engine;
    try (VectorSchemaRoot root = allTypes()) {
      engine.ingest("adbc_alltypes", root);
    }
  }

  /**
   * The suite's setup runs its SQL script ({@code CREATE TABLE}, {@code INSERT}), which the
   * read-only engine refuses; the same table is created once through the engine's bulk ingest
   * ({@link #allTypes}), and each test connects as the suite's setup does.
   */
  @Override
  @BeforeEach
  public void beforeEach() throws Exception {
    allocator = new RootAllocator();
    database = quirks.initDatabase(allocator);
    connection = database.connect();
  }

  /** The suite's {@code adbc_alltypes}: one row of values, one of NULLs (smallint as int: Iceberg has no int16). */
  private static VectorSchemaRoot allTypes() {
    Schema schema = new Schema(List.of(
        Field.nullable("bigint_t", new ArrowType.Int(64, true)),
        Field.nullable("blob_t", ArrowType.Binary.INSTANCE),
        Field.nullable("boolean_t", ArrowType.Bool.INSTANCE),
        Field.nullable("date_t", new ArrowType.Date(DateUnit.DAY)),
        Field.nullable("int_t", new ArrowType.Int(32, true)),
        Field.nullable("smallint_t", new ArrowType.Int(32, true)),
        Field.nullable("text_t", ArrowType.Utf8.INSTANCE),
        Field.nullable("time_without_time_zone_t", new ArrowType.Time(TimeUnit.MICROSECOND, 64)),
        Field.nullable("timestamp_without_time_zone_t", new ArrowType.Timestamp(TimeUnit.MICROSECOND, null)),
        Field.nullable("timestamp_with_time_zone_t", new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC"))));
    VectorSchemaRoot root = VectorSchemaRoot.create(schema, ROOT_ALLOCATOR);
    root.allocateNew();
    ((BigIntVector) root.getVector(0)).setSafe(0, 42L);
    ((VarBinaryVector) root.getVector(1)).setSafe(0, new byte[] {'a', 'b', 'c', 'd'});
    ((BitVector) root.getVector(2)).setSafe(0, 1);
    ((DateDayVector) root.getVector(3)).setSafe(0, 10957);
    ((IntVector) root.getVector(4)).setSafe(0, 42);
    ((IntVector) root.getVector(5)).setSafe(0, 42);
    ((VarCharVector) root.getVector(6)).setSafe(0, "foo".getBytes(StandardCharsets.UTF_8));
    ((TimeMicroVector) root.getVector(7)).setSafe(0, 14_706_123_456L);
    ((TimeStampMicroVector) root.getVector(8)).setSafe(0, 946_782_245_123_000L);
    ((TimeStampMicroTZVector) root.getVector(9)).setSafe(0, 946_760_645_123_000L);
    for (FieldVector vector : root.getFieldVectors()) {
      vector.setNull(1);
    }
    root.setRowCount(2);
    return root;
  }

  private static final BufferAllocator ROOT_ALLOCATOR = new RootAllocator();

  @Override
  @Test
  @Disabled("suite vs Arrow Java 18 (the version it declares): it expects TimeStampMicroVector.getObject to be a "
      + "long, but Arrow returns a LocalDateTime; the value itself is checked by timestampWithoutTimeZoneMicros")
  protected void timestampWithoutTimeZoneValue() {}

  /** The suite's timestampWithoutTimeZoneValue, reading the vector's raw microseconds. */
  @Test
  void timestampWithoutTimeZoneMicros() throws Exception {
    try (AdbcStatement statement = connection.createStatement()) {
      statement.setSqlQuery("SELECT timestamp_without_time_zone_t FROM adbc_alltypes");
      try (AdbcStatement.QueryResult result = statement.executeQuery()) {
        assertThat(result.getReader().loadNextBatch()).isTrue();
        VectorSchemaRoot root = result.getReader().getVectorSchemaRoot();
        assertThat(root.getRowCount()).isEqualTo(2);
        assertThat(root.getVector(0)).isInstanceOf(TimeStampMicroVector.class);
        assertThat(root.getVector(0).getField().getType())
            .isEqualTo(new ArrowType.Timestamp(TimeUnit.MICROSECOND, null));
        assertThat(((TimeStampMicroVector) root.getVector(0)).get(0)).isEqualTo(946_782_245_123_000L);
        assertThat(root.getVector(0).isNull(1)).isTrue();
      }
    }
  }

  @AfterAll
  static void stopEngine() throws Exception {
    engine.close();
    ROOT_ALLOCATOR.close();
  }

  @Override
  @Test
  @Disabled("driver gap: ADBC Java Flight SQL 0.18 does not implement getTableSchema (NOT_IMPLEMENTED before any call)")
  protected void bigintType() {}

  @Override
  @Test
  @Disabled("driver gap: ADBC Java Flight SQL 0.18 does not implement getTableSchema (NOT_IMPLEMENTED before any call)")
  protected void blobType() {}

  @Override
  @Test
  @Disabled("driver gap: ADBC Java Flight SQL 0.18 does not implement getTableSchema (NOT_IMPLEMENTED before any call)")
  protected void booleanType() {}

  @Override
  @Test
  @Disabled("driver gap: ADBC Java Flight SQL 0.18 does not implement getTableSchema (NOT_IMPLEMENTED before any call)")
  protected void dateType() {}

  @Override
  @Test
  @Disabled("driver gap: ADBC Java Flight SQL 0.18 does not implement getTableSchema (NOT_IMPLEMENTED before any call)")
  protected void intType() {}

  @Override
  @Test
  @Disabled("driver gap: ADBC Java Flight SQL 0.18 does not implement getTableSchema (NOT_IMPLEMENTED before any call)")
  protected void smallintType() {}

  @Override
  @Test
  @Disabled("driver gap: ADBC Java Flight SQL 0.18 does not implement getTableSchema (NOT_IMPLEMENTED before any call)")
  protected void textType() {}

  @Override
  @Test
  @Disabled("driver gap: ADBC Java Flight SQL 0.18 does not implement getTableSchema (NOT_IMPLEMENTED before any call)")
  protected void timeWithoutTimeZoneType() {}

  @Override
  @Test
  @Disabled("driver gap: ADBC Java Flight SQL 0.18 does not implement getTableSchema (NOT_IMPLEMENTED before any call)")
  protected void timestampWithoutTimeZoneType() {}

  @Override
  @Test
  @Disabled("driver gap: ADBC Java Flight SQL 0.18 does not implement getTableSchema (NOT_IMPLEMENTED before any call)")
  protected void timestampWithTimeZoneType() {}

  @Override
  @Test
  @Disabled("by design: Iceberg has no 16-bit integer; a smallint column is stored and read as int")
  protected void smallintValue() {}
}
