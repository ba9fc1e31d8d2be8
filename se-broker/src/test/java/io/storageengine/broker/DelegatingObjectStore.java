package io.storageengine.broker;

import io.storageengine.objectstore.ObjectStore;
import java.util.List;
import java.util.Optional;

/** Forwards everything; tests override single operations to inject faults. */
class DelegatingObjectStore implements ObjectStore {
  private final ObjectStore delegate;

  DelegatingObjectStore(ObjectStore delegate) {
    this.delegate = delegate;
  }

  @Override
  public Optional<Blob> get(String key) {
    return delegate.get(key);
  }

  @Override
  public Optional<byte[]> getRange(String key, long offset, int length) {
    return delegate.getRange(key, offset, length);
  }

  @Override
  public Optional<ObjectInfo> head(String key) {
    return delegate.head(key);
  }

  @Override
  public String put(String key, byte[] data) {
    return delegate.put(key, data);
  }

  @Override
  public Optional<String> putIfAbsent(String key, byte[] data) {
    return delegate.putIfAbsent(key, data);
  }

  @Override
  public Optional<String> putIfMatch(String key, byte[] data, String etag) {
    return delegate.putIfMatch(key, data, etag);
  }

  @Override
  public List<ObjectInfo> list(String prefix) {
    return delegate.list(prefix);
  }

  @Override
  public Children listChildren(String prefix) {
    return delegate.listChildren(prefix);
  }

  @Override
  public void delete(String key) {
    delegate.delete(key);
  }

  @Override
  public String describe() {
    return delegate.describe();
  }
}
