package io.storageengine.catalog;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;

/**
 * A table file on the local file system written with {@code java.nio}, where Hadoop's local
 * file system (what {@code HadoopFileIO} and {@code ResolvingFileIO} use for {@code file:} and
 * plain paths) would be used otherwise: without Hadoop's native library, every file Hadoop
 * creates on a local disk runs a {@code chmod} process (and another for its {@code .crc} side
 * file), about 6-12 ms a file against 0.1-0.3 ms, and a reconcile commit creates four to six
 * files (manifests, manifest list, metadata JSON, deletion vectors).
 *
 * <p>It behaves as Hadoop's file does where Iceberg can tell: {@link #location} is the location
 * as Hadoop prints it (so manifests and metadata record the same paths as before), parent
 * directories are created, {@link #create} refuses an existing file with Iceberg's
 * {@link AlreadyExistsException}, and {@link #createOrOverwrite} replaces the file and removes
 * the checksum side file Hadoop may have written for it earlier (Hadoop's reader would check the
 * new content against it). No checksum side file is written; Hadoop reads such files unchecked,
 * as it reads files any other tool wrote. Reading, listing and deleting stay with the wrapped
 * FileIO ({@link #toInputFile} asks it).
 */
final class LocalOutputFile implements OutputFile {
  private final String location;
  private final Path file;
  private final FileIO reader;

  private LocalOutputFile(String location, Path file, FileIO reader) {
    this.location = location;
    this.file = file;
    this.reader = reader;
  }

  /**
   * The local file at {@code location} ({@code file:/a}, {@code file:///a} or {@code /a}, an
   * absolute path with no host), whose input side {@code reader} opens; null for any other
   * location (an object store, a relative path, {@code file://host/...}), which the wrapped
   * FileIO keeps.
   */
  static LocalOutputFile forLocation(String location, FileIO reader) {
    org.apache.hadoop.fs.Path path;
    try {
      path = new org.apache.hadoop.fs.Path(location);
    } catch (IllegalArgumentException e) {
      return null; // not a path Hadoop's file would take either: the wrapped FileIO reports it
    }
    URI uri = path.toUri();
    boolean local = (uri.getScheme() == null || uri.getScheme().equalsIgnoreCase("file"))
        && (uri.getAuthority() == null || uri.getAuthority().isEmpty())
        && uri.getPath() != null && uri.getPath().startsWith("/");
    return local ? new LocalOutputFile(path.toString(), Path.of(uri.getPath()), reader) : null;
  }

  @Override
  public PositionOutputStream create() {
    try {
      return open(StandardOpenOption.CREATE_NEW);
    } catch (FileAlreadyExistsException e) {
      throw new AlreadyExistsException("Path already exists: %s", location);
    }
  }

  @Override
  public PositionOutputStream createOrOverwrite() {
    try {
      return open(StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING);
    } catch (FileAlreadyExistsException e) {
      throw new UncheckedIOException("cannot create " + location, e); // not with these options
    }
  }

  private PositionOutputStream open(StandardOpenOption... options) throws FileAlreadyExistsException {
    try {
      Path parent = file.getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      OutputStream out = Files.newOutputStream(file, options); // opened for writing with any options
      try {
        // A checksum Hadoop wrote for an earlier file of this name would not match this one.
        Files.deleteIfExists(checksumFile());
      } catch (IOException e) {
        out.close();
        throw e;
      }
      return new Stream(new BufferedOutputStream(out, 64 << 10));
    } catch (FileAlreadyExistsException e) {
      throw e;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create " + location, e);
    }
  }

  /** Hadoop's checksum side file of this file: {@code .<name>.crc} next to it. */
  private Path checksumFile() {
    return file.resolveSibling("." + file.getFileName() + ".crc");
  }

  @Override
  public String location() {
    return location;
  }

  @Override
  public InputFile toInputFile() {
    return reader.newInputFile(location);
  }

  @Override
  public String toString() {
    return location;
  }

  /** Counts the bytes written: Iceberg's writers record file sizes from {@link #getPos}. */
  private static final class Stream extends PositionOutputStream {
    private final OutputStream out;
    private long pos;

    Stream(OutputStream out) {
      this.out = out;
    }

    @Override
    public long getPos() {
      return pos;
    }

    @Override
    public void write(int b) throws IOException {
      out.write(b);
      pos++;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
      pos += len;
    }

    @Override
    public void flush() throws IOException {
      out.flush();
    }

    @Override
    public void close() throws IOException {
      out.close();
    }
  }
}
