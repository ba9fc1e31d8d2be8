package io.storageengine.catalog;

import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;

/**
 * A table file to write, reporting each opened stream as one call that lasts until the stream
 * is closed: {@link #createOrOverwrite} is {@code put}; {@link #create}, which refuses to
 * replace an existing file, is the conditional {@code put_if_absent} with
 * {@code io.condition_met}.
 */
final class TracedOutputFile implements OutputFile {
  private final TracingFileIO io;
  private final OutputFile file;

  TracedOutputFile(TracingFileIO io, OutputFile file) {
    this.io = io;
    this.file = file;
  }

  @Override
  public PositionOutputStream create() {
    // TracingFileIO.open records io.condition_met=false when the file exists already.
    return io.open("put_if_absent", file.location(), file::create, (stream, call) -> {
      call.conditionMet(true);
      return new TracedOutputStream(stream, call);
    });
  }

  @Override
  public PositionOutputStream createOrOverwrite() {
    return io.open("put", file.location(), file::createOrOverwrite, TracedOutputStream::new);
  }

  @Override
  public String location() {
    return file.location();
  }

  @Override
  public InputFile toInputFile() {
    return new TracedInputFile(io, file.toInputFile(), false);
  }

  @Override
  public String toString() {
    return file.toString();
  }
}
