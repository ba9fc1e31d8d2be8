package io.storageengine.server.adbc;

import org.apache.arrow.adbc.driver.testsuite.AbstractTransactionTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

@NotRunnable(tests = {"autoCommitByDefault", "toggleAutoCommit", "rollback", "commit", "enableAutoCommitAlsoCommits"},
    reason = "by design: transactions are refused (queries are read-only, one snapshot each); the ADBC Java Flight "
        + "SQL driver also refuses transaction methods itself (NOT_IMPLEMENTED)")
class AdbcTransactionTest extends AbstractTransactionTest {
  private static EngineQuirks engine;

  @BeforeAll
  static void startEngine() throws Exception {
    engine = new EngineQuirks();
    quirks = engine;
  }

  @AfterAll
  static void stopEngine() throws Exception {
    engine.close();
  }
}
