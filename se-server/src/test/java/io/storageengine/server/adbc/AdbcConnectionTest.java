package io.storageengine.server.adbc;

import org.apache.arrow.adbc.driver.testsuite.AbstractConnectionTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

class AdbcConnectionTest extends AbstractConnectionTest {
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
