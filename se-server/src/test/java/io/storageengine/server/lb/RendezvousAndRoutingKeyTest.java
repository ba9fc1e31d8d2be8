package io.storageengine.server.lb;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.storageengine.ingest.IngestProtocol;
import io.storageengine.wal.WalOperation;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.impl.Flight;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.junit.jupiter.api.Test;

class RendezvousAndRoutingKeyTest {
  private static final List<String> THREE = List.of("10.0.0.1:7777", "10.0.0.2:7777", "10.0.0.3:7777");

  @Test
  void ownersSpreadEvenlyAndOnlyTheRemovedNodesKeysMove() {
    Map<String, Integer> owned = new HashMap<>();
    Map<String, String> before = new HashMap<>();
    for (int i = 0; i < 3000; i++) {
      String key = "warehouse/sales/t" + i;
      String owner = Rendezvous.order(key, THREE).get(0);
      owned.merge(owner, 1, Integer::sum);
      before.put(key, owner);
    }
    // 1000 expected each; a fair hash stays well within +-15 %.
    assertThat(owned.values()).allSatisfy(n -> assertThat(n).isBetween(850, 1150));

    List<String> two = List.of(THREE.get(0), THREE.get(2));
    int moved = 0;
    for (Map.Entry<String, String> e : before.entrySet()) {
      String now = Rendezvous.order(e.getKey(), two).get(0);
      if (!e.getValue().equals(THREE.get(1))) {
        assertThat(now).as("a key whose owner stayed keeps it").isEqualTo(e.getValue());
      } else {
        // A removed owner's keys go to their second choice.
        assertThat(now).isEqualTo(Rendezvous.order(e.getKey(), THREE).get(1));
        moved++;
      }
    }
    assertThat(moved).isEqualTo(owned.get(THREE.get(1)));
  }

  @Test
  void orderIsAPermutationIndependentOfInputOrder() {
    List<String> reversed = List.of(THREE.get(2), THREE.get(1), THREE.get(0));
    assertThat(Rendezvous.order("k", THREE)).containsExactlyInAnyOrderElementsOf(THREE)
        .isEqualTo(Rendezvous.order("k", reversed));
    assertThat(Rendezvous.order("k", List.of())).isEmpty();
  }

  @Test
  void nativeHeaderInTheSchemaMessageOrTheNextOne() {
    byte[] header = IngestProtocol.encodeHeader(new IngestProtocol.Header("warehouse", List.of("crm", "eu"),
        "customers", WalOperation.UPSERT));
    Flight.FlightDescriptor descriptor = Flight.FlightDescriptor.newBuilder()
        .setType(Flight.FlightDescriptor.DescriptorType.CMD)
        .setCmd(Any.newBuilder().setTypeUrl(IngestProtocol.TYPE_URL).build().toByteString()).build();
    byte[] schemaWithHeader = Flight.FlightData.newBuilder().setFlightDescriptor(descriptor)
        .setAppMetadata(ByteString.copyFrom(header)).build().toByteArray();
    assertThat(RoutingKey.ofDoPut(List.of(schemaWithHeader))).hasValue("warehouse/crm.eu/customers");

    byte[] schemaOnly = Flight.FlightData.newBuilder().setFlightDescriptor(descriptor).build().toByteArray();
    assertThat(RoutingKey.ofDoPut(List.of(schemaOnly))).as("needs the next message").isEmpty();
    byte[] metadataOnly = Flight.FlightData.newBuilder().setAppMetadata(ByteString.copyFrom(header)).build().toByteArray();
    assertThat(RoutingKey.ofDoPut(List.of(schemaOnly, metadataOnly))).hasValue("warehouse/crm.eu/customers");

    byte[] garbage = Flight.FlightData.newBuilder().setFlightDescriptor(descriptor)
        .setAppMetadata(ByteString.copyFromUtf8("{not json")).build().toByteArray();
    assertThat(RoutingKey.ofDoPut(List.of(garbage))).as("the server will reject it; the balancer only routes").isEmpty();
  }

  @Test
  void bulkIngestNamesTheSameTableTheSameWay() {
    FlightSql.CommandStatementIngest ingest = FlightSql.CommandStatementIngest.newBuilder()
        .setCatalog("warehouse").setSchema("crm.eu").setTable("customers")
        .setTableDefinitionOptions(FlightSql.CommandStatementIngest.TableDefinitionOptions.getDefaultInstance())
        .build();
    Flight.FlightDescriptor descriptor = Flight.FlightDescriptor.newBuilder()
        .setType(Flight.FlightDescriptor.DescriptorType.CMD).setCmd(Any.pack(ingest).toByteString()).build();
    byte[] first = Flight.FlightData.newBuilder().setFlightDescriptor(descriptor).build().toByteArray();
    assertThat(RoutingKey.ofDoPut(List.of(first))).hasValue("warehouse/crm.eu/customers");
  }
}
