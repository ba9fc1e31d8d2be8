package io.storageengine.objectstore;

class MemoryObjectStoreTest extends ObjectStoreContractTest {
  @Override
  protected ObjectStore newStore() {
    return new MemoryObjectStore();
  }
}
