package io.storageengine.catalog;

import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.SeekableInputStream;

/**
 * A table file to read, reporting its storage calls: {@link #getLength} and {@link #exists} are
 * {@code head}, {@link #newStream} is {@code get} (one span per opened stream, until it closes).
 *
 * <p>A length given when the file was named (manifests, data and delete files carry theirs) or
 * already fetched once is answered by the wrapped file without storage access, so it makes no
 * span: the wrapped files cache what they fetched.
 */
final class TracedInputFile implements InputFile {
  private final TracingFileIO io;
  private final InputFile file;
  private boolean lengthKnown;

  TracedInputFile(TracingFileIO io, InputFile file, boolean lengthKnown) {
    this.io = io;
    this.file = file;
    this.lengthKnown = lengthKnown;
  }

  @Override
  public long getLength() {
    if (lengthKnown) {
      return file.getLength();
    }
    long length = io.traced("head", file.location(), file::getLength, TableStorageCall::size);
    lengthKnown = true;
    return length;
  }

  @Override
  public SeekableInputStream newStream() {
    return io.open("get", file.location(), file::newStream, TracedInputStream::wrap);
  }

  @Override
  public String location() {
    return file.location();
  }

  @Override
  public boolean exists() {
    return io.traced("head", file.location(), file::exists, (call, exists) -> {});
  }

  @Override
  public String toString() {
    return file.toString();
  }
}
