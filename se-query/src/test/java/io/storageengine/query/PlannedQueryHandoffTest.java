package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PlannedQueryHandoffTest {
  private static byte[] handle(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static PreparedQuery query(List<Connection> connections) throws Exception {
    Connection c = DriverManager.getConnection("jdbc:duckdb:");
    connections.add(c);
    return new PreparedQuery(c, "SELECT 1", Map.of(), QueryParameters.NONE, List.of(), List.of());
  }

  @Test
  void aPlannedQueryIsTakenOnceAndOnlyForItsHandle() throws Exception {
    List<Connection> connections = new ArrayList<>();
    try (PlannedQueryHandoff handoff = new PlannedQueryHandoff()) {
      PreparedQuery q = query(connections);
      handoff.offer(handle("a"), "t", q);
      assertThat(handoff.take(handle("b"))).isNull();
      assertThat(handoff.take(handle("a"))).isSameAs(q);
      assertThat(handoff.take(handle("a"))).isNull();
      q.close();
    }
  }

  @Test
  void overflowAndCloseCloseWhatNobodyTook() throws Exception {
    List<Connection> connections = new ArrayList<>();
    PlannedQueryHandoff handoff = new PlannedQueryHandoff();
    for (int i = 0; i <= PlannedQueryHandoff.MAX_ENTRIES; i++) {
      handoff.offer(handle("q" + i), "t", query(connections));
    }
    // The eldest was pushed out and closed; the newest is still there.
    assertThat(connections.get(0).isClosed()).isTrue();
    assertThat(handoff.take(handle("q0"))).isNull();
    PreparedQuery newest = handoff.take(handle("q" + PlannedQueryHandoff.MAX_ENTRIES));
    assertThat(newest).isNotNull();
    newest.close();
    handoff.close();
    assertThat(connections).allSatisfy(c -> assertThat(c.isClosed()).isTrue());
  }

  @Test
  void anEntryNobodyTakesIsClosedWithoutAnotherCall() throws Exception {
    List<Connection> connections = new ArrayList<>();
    try (PlannedQueryHandoff handoff = new PlannedQueryHandoff(50_000_000L, 20)) {
      handoff.offer(handle("abandoned"), "t", query(connections));
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (!connections.get(0).isClosed() && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(connections.get(0).isClosed()).as("closed by the sweep").isTrue();
      assertThat(handoff.take(handle("abandoned"))).isNull();
    }
  }

  @Test
  void releaseOldestClosesTheOldestEntryOfTheTenantOnly() throws Exception {
    List<Connection> connections = new ArrayList<>();
    try (PlannedQueryHandoff handoff = new PlannedQueryHandoff()) {
      handoff.offer(handle("a1"), "a", query(connections));
      handoff.offer(handle("b1"), "b", query(connections));
      handoff.offer(handle("a2"), "a", query(connections));
      assertThat(handoff.releaseOldest("a")).isTrue();
      assertThat(connections.get(0).isClosed()).as("a1 released").isTrue();
      assertThat(connections.get(1).isClosed()).as("b1 kept").isFalse();
      assertThat(handoff.take(handle("a1"))).isNull();
      assertThat(handoff.releaseOldest("a")).isTrue();
      assertThat(handoff.releaseOldest("a")).isFalse();
      assertThat(handoff.releaseOldest(null)).as("any tenant").isTrue();
      assertThat(connections).allSatisfy(c -> assertThat(c.isClosed()).isTrue());
      assertThat(handoff.releaseOldest(null)).isFalse();
    }
  }
}
