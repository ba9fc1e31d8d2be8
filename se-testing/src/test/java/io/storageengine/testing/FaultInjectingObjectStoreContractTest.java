package io.storageengine.testing;

import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.objectstore.ObjectStoreContractTest;

/** The contract through {@link FaultInjectingObjectStore} with no fault programmed. */
class FaultInjectingObjectStoreContractTest extends ObjectStoreContractTest {
  @Override
  protected ObjectStore newStore() {
    return new FaultInjectingObjectStore(new MemoryObjectStore());
  }
}
