package io.storageengine.objectstore;

import io.storageengine.common.telemetry.Telemetry;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/** The contract through {@link TracingObjectStore} with real spans, over a directory store. */
class TracingObjectStoreContractTest extends ObjectStoreContractTest {
  @TempDir
  Path temp;

  private final Telemetry telemetry = Telemetry.builder().build();

  @Override
  protected ObjectStore newStore() {
    return new TracingObjectStore(new FsObjectStore(temp.resolve("store")), "cluster", telemetry);
  }

  @AfterEach
  void closeTelemetry() {
    telemetry.close();
  }
}
