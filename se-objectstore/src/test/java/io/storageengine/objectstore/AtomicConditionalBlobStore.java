package io.storageengine.objectstore;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.gaul.s3proxy.PutOptions2;
import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.domain.Blob;
import org.jclouds.blobstore.domain.BlobMetadata;
import org.jclouds.blobstore.options.PutOptions;
import org.jclouds.blobstore.util.ForwardingBlobStore;

/**
 * Makes S3Proxy's conditional PUTs atomic. S3Proxy 3.0.0 evaluates {@code If-None-Match} and
 * {@code If-Match} by reading the blob's metadata and then writing, and its local backends
 * ignore the conditions it passes down, so two racing conditional PUTs can both win. This
 * wrapper re-checks the conditions and writes while holding a per-key lock, which every write
 * and delete of that key also takes; a failed check answers HTTP 412 (S3Proxy maps an
 * {@code IllegalStateException} whose message starts with {@code PreconditionFailed} to 412).
 */
final class AtomicConditionalBlobStore extends ForwardingBlobStore {
  private final Map<String, Object> locks = new ConcurrentHashMap<>();

  AtomicConditionalBlobStore(BlobStore delegate) {
    super(delegate);
  }

  @Override
  public String putBlob(String container, Blob blob) {
    return putBlob(container, blob, PutOptions.NONE);
  }

  @Override
  public String putBlob(String container, Blob blob, PutOptions options) {
    String name = blob.getMetadata().getName();
    synchronized (lockOf(container, name)) {
      if (options instanceof PutOptions2 conditions) {
        check(container, name, conditions.getIfNoneMatch(), conditions.getIfMatch());
      }
      return delegate().putBlob(container, blob, options);
    }
  }

  @Override
  public void removeBlob(String container, String name) {
    synchronized (lockOf(container, name)) {
      delegate().removeBlob(container, name);
    }
  }

  private void check(String container, String name, String ifNoneMatch, String ifMatch) {
    if (ifNoneMatch == null && ifMatch == null) {
      return;
    }
    BlobMetadata current = delegate().blobMetadata(container, name);
    if ("*".equals(ifNoneMatch) && current != null) {
      throw new IllegalStateException("PreconditionFailed: " + name + " exists");
    }
    if (ifMatch != null
        && (current == null || !unquote(ifMatch).equals(unquote(current.getETag())))) {
      throw new IllegalStateException("PreconditionFailed: " + name + " does not match");
    }
  }

  private Object lockOf(String container, String name) {
    return locks.computeIfAbsent(container + "/" + name, k -> new Object());
  }

  private static String unquote(String etag) {
    return etag == null ? "" : etag.replace("\"", "");
  }
}
