package io.storageengine.secretstore;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MemorySecretStoreTest extends SecretStoreContractTest {
  @Override
  protected SecretStore newStore() {
    return new MemorySecretStore();
  }

  @Test
  void describesItself() {
    assertThat(store.describe()).isEqualTo("memory");
  }
}
