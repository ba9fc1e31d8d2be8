package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Time travel and metadata tables over Flight SQL: the ticket of a query on a branch pins the
 * snapshot the branch had when planned (also when {@code DoGet} plans it again), nested metadata
 * columns (maps, structs, lists, binary) stream as Arrow, errors carry their status.
 */
class TimeTravelFlightTest {
  private static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "name", Types.StringType.get()));

  @TempDir Path dir;
  private BufferAllocator allocator;
  private TestQueryServer server;
  private FlightSqlClient sql;
  private Table table;

  @BeforeEach
  void start() throws Exception {
    allocator = new RootAllocator();
    TestWarehouse warehouse = new TestWarehouse();
    table = TestWarehouse.createTable(warehouse.localCatalog("local", dir.resolve("warehouse")), "ns", "t", SCHEMA,
        PartitionSpec.unpartitioned());
    TestWarehouse.append(table, List.of(TestWarehouse.record(SCHEMA, 1L, "a")));
    table.manageSnapshots().createBranch("dev").commit();
    server = new TestQueryServer(allocator, warehouse, dir.resolve("query"));
    sql = new FlightSqlClient(FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.port())).build());
  }

  @AfterEach
  void stop() throws Exception {
    sql.close();
    server.close();
    allocator.close();
  }

  @Test
  void aTicketReadsTheBranchAsItWasWhenPlanned() throws Exception {
    FlightInfo info = sql.execute("SELECT id FROM ns.t FOR VERSION AS OF 'dev' ORDER BY id",
        QueryFlightSqlProducerTest.tenant("local"));
    Ticket ticket = info.getEndpoints().get(0).getTicket();
    // The required column reads as not nullable, naming its table, as for the current snapshot.
    Field id = info.getSchemaOptional().orElseThrow().getFields().get(0);
    assertThat(id.isNullable()).isFalse();
    assertThat(id.getMetadata()).containsEntry("ARROW:FLIGHT:SQL:TABLE_NAME", "t");
    TestWarehouse.append(table, List.of(TestWarehouse.record(SCHEMA, 2L, "b")));
    table.manageSnapshots().replaceBranch("dev", "main").commit();
    // The started query, then the ticket planned again from its pin: both read the old branch head.
    assertThat(fetch(ticket)).containsExactly("1");
    assertThat(fetch(ticket)).containsExactly("1");
    Ticket now = sql.execute("SELECT id FROM ns.t AT (VERSION => 'dev') ORDER BY id",
        QueryFlightSqlProducerTest.tenant("local")).getEndpoints().get(0).getTicket();
    assertThat(fetch(now)).containsExactly("1", "2");
  }

  @Test
  void metadataTablesStreamNestedColumns() throws Exception {
    FlightInfo info = sql.execute("SELECT * FROM ns.\"t$files\"", QueryFlightSqlProducerTest.tenant("local"));
    assertThat(info.getSchemaOptional().orElseThrow().getFields()).extracting(Field::getName)
        .contains("content", "file_path", "column_sizes", "lower_bounds", "split_offsets", "readable_metrics");
    List<String> rows = fetch(info.getEndpoints().get(0).getTicket());
    assertThat(rows).hasSize(1);
    assertThat(rows).allMatch(row -> row.startsWith("0|file:"));
  }

  @Test
  void aMissingSnapshotIsNotFoundOverFlight() {
    assertThatThrownBy(() -> sql.execute("SELECT * FROM ns.t FOR VERSION AS OF 7", QueryFlightSqlProducerTest.tenant("local")))
        .isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
          assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND);
          assertThat(e.status().description()).isEqualTo("table default.\"ns\".\"t\" has no snapshot 7");
        });
  }

  private List<String> fetch(Ticket ticket) throws Exception {
    List<String> rows = new ArrayList<>();
    try (FlightStream stream = sql.getStream(ticket, QueryFlightSqlProducerTest.tenant("local"))) {
      while (stream.next()) {
        VectorSchemaRoot root = stream.getRoot();
        for (int row = 0; row < root.getRowCount(); row++) {
          List<String> values = new ArrayList<>();
          for (int column = 0; column < root.getFieldVectors().size(); column++) {
            values.add(String.valueOf(root.getVector(column).getObject(row)));
          }
          rows.add(String.join("|", values));
        }
      }
    }
    return rows;
  }
}
