package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A client that asks for FlightInfos and never fetches their tickets must not hold its tenant's
 * query slots: the planned queries waiting for their DoGet give their admission back to the next
 * query of the tenant, and a ticket whose planned query was released still streams its result
 * (planned again from its pinned handle).
 */
class UnclaimedFlightInfoTest {
  @BeforeAll
  static void setUp() throws Exception {
    QueryLimitsTest.setUp();
  }

  @AfterAll
  static void tearDown() throws Exception {
    QueryLimitsTest.tearDown();
  }

  @Test
  void unfetchedFlightInfosDoNotHoldTheTenantsSlots() throws Exception {
    QueryLimits limits = QueryLimits.defaults().withTenantConcurrency(1, 4);
    try (QueryLimitsTest.LimitedServer server = new QueryLimitsTest.LimitedServer(QueryLimitsTest.config(limits))) {
      HeaderCallOption a = QueryLimitsTest.header("a");
      long started = System.nanoTime();
      FlightInfo first = server.sql.execute("SELECT count(*) FROM n.t", a);
      // With one slot, this waited the handoff's 30 s TTL (or, with no queue, was refused) while
      // the first FlightInfo's query waited for a DoGet that never came.
      FlightInfo second = server.sql.execute("SELECT count(*) FROM n.t WHERE id < 10", a);
      FlightInfo third = server.sql.execute("SELECT max(id) FROM n.t", a);
      assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started)).isLessThan(10);
      assertThat(server.producer.engine().admission().running()).isEqualTo(1);
      // Every ticket still answers: the released ones are planned again on their pinned snapshot.
      assertThat(single(server, first, a)).isEqualTo(10_000L);
      assertThat(single(server, second, a)).isEqualTo(10L);
      assertThat(single(server, third, a)).isEqualTo(9_999L);
      // Another tenant's planned query is not given up for tenant a's, which has a slot of its own.
      FlightInfo other = server.sql.execute("SELECT count(*) FROM n.t", QueryLimitsTest.header("b"));
      assertThat(server.rows("a", "SELECT 1")).isEqualTo(1);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (server.producer.engine().admission().running() != 1 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(server.producer.engine().admission().running()).as("b's planned query still waits").isEqualTo(1);
      assertThat(single(server, other, QueryLimitsTest.header("b"))).isEqualTo(10_000L);
    }
  }

  private static long single(QueryLimitsTest.LimitedServer server, FlightInfo info, HeaderCallOption header)
      throws Exception {
    try (FlightStream stream = server.sql.getStream(info.getEndpoints().get(0).getTicket(), header)) {
      assertThat(stream.next()).isTrue();
      return ((Number) stream.getRoot().getVector(0).getObject(0)).longValue();
    }
  }
}
