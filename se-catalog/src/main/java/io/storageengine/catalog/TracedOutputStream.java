package io.storageengine.catalog;

import java.io.IOException;
import org.apache.iceberg.io.PositionOutputStream;

/**
 * A table file being written: its {@code put} (or {@code put_if_absent}) call's span stays open
 * until the stream is closed, when the file becomes visible, then records the bytes written
 * ({@code io.size}). A failed write or close marks the call failed.
 */
final class TracedOutputStream extends PositionOutputStream {
  private final PositionOutputStream out;
  private final TableStorageCall call;
  private long bytesWritten;
  private boolean closed;

  TracedOutputStream(PositionOutputStream out, TableStorageCall call) {
    this.out = out;
    this.call = call;
  }

  @Override
  public void write(int b) throws IOException {
    try {
      out.write(b);
      bytesWritten++;
    } catch (IOException | RuntimeException e) {
      call.failed(e);
      throw e;
    }
  }

  @Override
  public void write(byte[] buffer, int offset, int length) throws IOException {
    try {
      out.write(buffer, offset, length);
      bytesWritten += length;
    } catch (IOException | RuntimeException e) {
      call.failed(e);
      throw e;
    }
  }

  @Override
  public void flush() throws IOException {
    try {
      out.flush();
    } catch (IOException | RuntimeException e) {
      call.failed(e);
      throw e;
    }
  }

  @Override
  public long getPos() throws IOException {
    return out.getPos();
  }

  /** What the wrapped stream stores (it may differ from the position, e.g. when encrypting). */
  @Override
  public long storedLength() throws IOException {
    return out.storedLength();
  }

  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    call.endWithClose(out, bytesWritten);
  }
}
