package io.storageengine.catalog;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.function.IntFunction;
import org.apache.iceberg.io.FileRange;
import org.apache.iceberg.io.RangeReadable;
import org.apache.iceberg.io.SeekableInputStream;

/**
 * A table file opened for reading: its {@code get} call's span stays open until the stream is
 * closed, then records the bytes read ({@code io.size}). Reads add to a counter, never a span.
 * A failed read marks the call failed unless a later read succeeds.
 *
 * <p>{@link #wrap} keeps range reads: readers (Parquet, Puffin) check the stream for
 * {@link RangeReadable} to read footers and vectored ranges without seeking.
 */
class TracedInputStream extends SeekableInputStream {
  private final SeekableInputStream in;
  private final TableStorageCall call;
  private long bytesRead;
  private boolean closed;

  TracedInputStream(SeekableInputStream in, TableStorageCall call) {
    this.in = in;
    this.call = call;
  }

  /** A traced stream over {@code in}, range-readable when {@code in} is. */
  static SeekableInputStream wrap(SeekableInputStream in, TableStorageCall call) {
    return in instanceof RangeReadable ? new RangeReadableStream(in, call) : new TracedInputStream(in, call);
  }

  @Override
  public int read() throws IOException {
    try {
      int b = in.read();
      if (b >= 0) {
        bytesRead++;
      }
      call.succeeded();
      return b;
    } catch (IOException | RuntimeException e) {
      call.failed(e);
      throw e;
    }
  }

  @Override
  public int read(byte[] buffer, int offset, int length) throws IOException {
    try {
      int n = in.read(buffer, offset, length);
      counted(n);
      return n;
    } catch (IOException | RuntimeException e) {
      call.failed(e);
      throw e;
    }
  }

  @Override
  public long skip(long n) throws IOException {
    return in.skip(n);
  }

  @Override
  public int available() throws IOException {
    return in.available();
  }

  @Override
  public long getPos() throws IOException {
    return in.getPos();
  }

  @Override
  public void seek(long newPos) throws IOException {
    in.seek(newPos);
  }

  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    call.endWithClose(in, bytesRead);
  }

  /** Counts a successful read of {@code n} bytes (negative at the end of the file). */
  final void counted(long n) {
    if (n > 0) {
      bytesRead += n;
    }
    call.succeeded();
  }

  final void failed(Throwable e) {
    call.failed(e);
  }

  /** The variant for streams that read ranges directly (S3). */
  private static final class RangeReadableStream extends TracedInputStream implements RangeReadable {
    private final RangeReadable ranges;

    RangeReadableStream(SeekableInputStream in, TableStorageCall call) {
      super(in, call);
      this.ranges = (RangeReadable) in;
    }

    @Override
    public void readFully(long position, byte[] buffer, int offset, int length) throws IOException {
      try {
        ranges.readFully(position, buffer, offset, length);
        counted(length);
      } catch (IOException | RuntimeException e) {
        failed(e);
        throw e;
      }
    }

    @Override
    public int readTail(byte[] buffer, int offset, int length) throws IOException {
      try {
        int n = ranges.readTail(buffer, offset, length);
        counted(n);
        return n;
      } catch (IOException | RuntimeException e) {
        failed(e);
        throw e;
      }
    }

    @Override
    public void readVectored(List<FileRange> fileRanges, IntFunction<ByteBuffer> allocate) throws IOException {
      try {
        ranges.readVectored(fileRanges, allocate);
        // The ranges complete asynchronously; what was asked for is what the reader gets.
        long requested = 0;
        for (FileRange range : fileRanges) {
          requested += range.length();
        }
        counted(requested);
      } catch (IOException | RuntimeException e) {
        failed(e);
        throw e;
      }
    }
  }
}
