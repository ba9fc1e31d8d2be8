package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A ticket pins the WAL tail it read, so a DoGet that plans again reads exactly those segments. */
class StatementHandleTest {
  @Test
  void pinsKeepTheWalSeqReadOnTopOfTheSnapshot() {
    Map<String, SnapshotPin> pins = new LinkedHashMap<>();
    pins.put("a", new SnapshotPin(42L, 3, 17L));
    pins.put("b", new SnapshotPin(null, 0, 0L));
    pins.put("c", new SnapshotPin(7L, 1));
    StatementHandle handle = new StatementHandle("alice", "warehouse", "SELECT 1", pins);

    StatementHandle decoded = StatementHandle.decode(handle.encode());

    assertThat(decoded.pins()).containsExactlyEntriesOf(pins);
    assertThat(decoded.pins().get("c").walThrough()).as("a snapshot-only read stays snapshot-only").isNull();
  }
}
