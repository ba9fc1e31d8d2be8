package io.storageengine.catalog;

import io.storageengine.common.SeException;
import io.storageengine.common.telemetry.RetryScope;
import io.storageengine.common.telemetry.Telemetry;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestListFile;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.hadoop.HadoopConfigurable;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.hadoop.SerializableConfiguration;
import org.apache.iceberg.io.BulkDeletionFailureException;
import org.apache.iceberg.io.DelegateFileIO;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.ResolvingFileIO;
import org.apache.iceberg.io.StorageCredential;
import org.apache.iceberg.io.SupportsBulkOperations;
import org.apache.iceberg.io.SupportsPrefixOperations;
import org.apache.iceberg.io.SupportsStorageCredentials;
import org.apache.iceberg.util.SerializableSupplier;

/**
 * The {@link FileIO} of tenant catalogs: wraps the one the catalog configuration names and
 * reports every call to table storage (metadata, manifests, data and delete files) as a
 * {@code storage.operation} span and in the object-store metrics with {@code storage=table}, as
 * {@code TracingObjectStore} does for cluster storage.
 *
 * <p>Configured through Iceberg's {@code io-impl}: {@link CatalogFactory} names this class there
 * and the wrapped implementation in {@value #DELEGATE_IMPL} (default {@code ResolvingFileIO}).
 * The Hadoop configuration and storage credentials handed to this FileIO before
 * {@link #initialize} are passed on to the wrapped one, which receives all properties.
 *
 * <p>Operations: {@code head} ({@link InputFile#getLength} when not known, {@link
 * InputFile#exists}), {@code get} (one span per opened stream, until it closes, with the bytes
 * read), {@code put} ({@link OutputFile#createOrOverwrite}) and {@code put_if_absent} ({@link
 * OutputFile#create}), both until the stream closes, with the bytes written; {@code delete}
 * ({@link #deleteFile}, {@link #deletePrefix}, {@link #deleteFiles} with the number of files);
 * {@code list} ({@link #listPrefix}, with the number of entries). Fields: {@code io.bucket}
 * (object stores), {@code io.path} (the key or local path), {@code io.root} (the catalog's
 * {@code warehouse}, when set), retries, {@code error} and {@code error.kind}; never bytes,
 * properties or credentials.
 *
 * <p>Listing by prefix and bulk deletion are what the wrapped FileIO offers: listing fails with
 * {@link UnsupportedOperationException} when it cannot list; bulk deletion falls back to deleting
 * file by file, reporting failures as a {@link BulkDeletionFailureException}.
 */
public final class TracingFileIO implements DelegateFileIO, HadoopConfigurable, SupportsStorageCredentials {
  /** The property naming the wrapped FileIO class; {@code ResolvingFileIO} when absent. */
  public static final String DELEGATE_IMPL = "se.io.delegate-impl";
  /**
   * The property naming the {@link #bind binding} whose telemetry a TracingFileIO made by Iceberg
   * (from {@code io-impl}) reports to; without it, or once the binding is closed, the FileIO
   * reports to {@link Telemetry#none()}.
   */
  public static final String TELEMETRY_BINDING = "se.io.telemetry-binding";

  /**
   * The telemetry of each open binding. Iceberg builds {@code io-impl} FileIOs by reflection from
   * catalog properties, so a catalog's FileIO cannot be handed its telemetry directly: the owner
   * of the catalogs (the engine's catalog registry) binds its telemetry here and names the binding
   * in the catalogs' properties. This map is the one process-wide piece; each engine's entry is
   * its own and is removed when the engine closes its registry.
   */
  private static final ConcurrentMap<String, Telemetry> BINDINGS = new ConcurrentHashMap<>();

  private static final long serialVersionUID = 1L;

  private FileIO delegate;
  private String root;
  private LocationConfinement confinement = LocationConfinement.unconfined();
  private SerializableSupplier<Configuration> conf;
  private List<StorageCredential> credentials = List.of();
  /** Given to the constructor; null for one Iceberg made (it reports to its binding's). */
  private final transient Telemetry telemetry;
  /** The {@value #TELEMETRY_BINDING} property of {@link #initialize}; kept across serialization. */
  private String telemetryBinding;

  /**
   * For Iceberg's {@code io-impl}: reports to the telemetry of the binding named by
   * {@value #TELEMETRY_BINDING} in the properties given to {@link #initialize}, also after
   * Java serialization (a FileIO built with a telemetry of its own reports to none once
   * deserialized).
   */
  public TracingFileIO() {
    this.telemetry = null;
  }

  /** Reports to {@code telemetry}. */
  public TracingFileIO(Telemetry telemetry) {
    this.telemetry = Objects.requireNonNull(telemetry, "telemetry");
  }

  /**
   * Makes {@code telemetry} reachable by the TracingFileIOs Iceberg builds for catalogs whose
   * properties carry {@value #TELEMETRY_BINDING} = {@link Binding#id()}, until the binding is closed.
   */
  public static Binding bind(Telemetry telemetry) {
    Objects.requireNonNull(telemetry, "telemetry");
    String id = UUID.randomUUID().toString();
    BINDINGS.put(id, telemetry);
    return new Binding(id);
  }

  /** An entry of {@link #bind}; once it is closed, the FileIOs naming it report to {@link Telemetry#none()}. */
  public record Binding(String id) implements AutoCloseable {
    @Override
    public void close() {
      BINDINGS.remove(id);
    }
  }

  @Override
  public void initialize(Map<String, String> properties) {
    this.telemetryBinding = properties.get(TELEMETRY_BINDING);
    String impl = properties.getOrDefault(DELEGATE_IMPL, ResolvingFileIO.class.getName());
    if (impl.equals(TracingFileIO.class.getName())) {
      throw SeException.invalid("FileIO property %s: %s cannot wrap itself; name the FileIO to trace",
          DELEGATE_IMPL, impl);
    }
    String warehouse = properties.get(CatalogProperties.WAREHOUSE_LOCATION);
    StorageLocation warehouseLocation = StorageLocation.parse(warehouse);
    this.root = warehouseLocation == null ? null : warehouseLocation.path();
    this.confinement = LocationConfinement.fromProperties(properties);
    this.delegate = CatalogUtil.loadFileIO(impl, properties, conf == null ? null : conf.get(), credentials);
  }

  /**
   * The tenant's storage root this FileIO holds every path to ({@value LocationConfinement#ROOT_PROPERTY});
   * a path outside it is refused with INVALID_ARGUMENT before the wrapped FileIO sees it.
   */
  public LocationConfinement confinement() {
    return confinement;
  }

  private String confined(String path) {
    confinement.check(path, "table storage path");
    return path;
  }

  /** The wrapped FileIO. */
  public FileIO delegate() {
    if (delegate == null) {
      throw new IllegalStateException("TracingFileIO is not initialized");
    }
    return delegate;
  }

  @Override
  public InputFile newInputFile(String path) {
    return new TracedInputFile(this, delegate().newInputFile(confined(path)), false);
  }

  @Override
  public InputFile newInputFile(String path, long length) {
    return new TracedInputFile(this, delegate().newInputFile(confined(path), length), true);
  }

  @Override
  public InputFile newInputFile(DataFile file) {
    confined(file.location());
    return new TracedInputFile(this, delegate().newInputFile(file), true);
  }

  @Override
  public InputFile newInputFile(DeleteFile file) {
    confined(file.location());
    return new TracedInputFile(this, delegate().newInputFile(file), true);
  }

  @Override
  public InputFile newInputFile(ManifestFile manifest) {
    confined(manifest.path());
    return new TracedInputFile(this, delegate().newInputFile(manifest), true);
  }

  @Override
  public InputFile newInputFile(ManifestListFile manifestList) {
    confined(manifestList.location());
    return new TracedInputFile(this, delegate().newInputFile(manifestList), false);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Where the wrapped FileIO would write a local path through Hadoop's local file system
   * ({@code HadoopFileIO}, or {@code ResolvingFileIO} for {@code file:} and plain paths), the file
   * is written with {@code java.nio} instead ({@link LocalOutputFile}: Hadoop runs a process per
   * file it creates there).
   */
  @Override
  public OutputFile newOutputFile(String path) {
    FileIO io = delegate();
    confined(path);
    OutputFile local = io instanceof HadoopFileIO || io instanceof ResolvingFileIO
        ? LocalOutputFile.forLocation(path, io) : null;
    return new TracedOutputFile(this, local != null ? local : io.newOutputFile(path));
  }

  @Override
  public void deleteFile(String path) {
    FileIO io = delegate();
    confined(path);
    traced("delete", path, () -> {
      io.deleteFile(path);
      return null;
    }, (call, nothing) -> {});
  }

  @Override
  public Iterable<FileInfo> listPrefix(String prefix) {
    SupportsPrefixOperations io = prefixOperations("list files under a prefix");
    confined(prefix);
    Iterable<FileInfo> listing;
    try {
      listing = io.listPrefix(prefix);
    } catch (RuntimeException | Error e) {
      TableStorageCall call = call("list", prefix);
      call.failed(e);
      call.end();
      throw e;
    }
    return new TracedListing(this, prefix, listing);
  }

  @Override
  public void deletePrefix(String prefix) {
    SupportsPrefixOperations io = prefixOperations("delete files under a prefix");
    confined(prefix);
    traced("delete", prefix, () -> {
      io.deletePrefix(prefix);
      return null;
    }, (call, nothing) -> {});
  }

  @Override
  public void deleteFiles(Iterable<String> paths) throws BulkDeletionFailureException {
    FileIO io = delegate();
    if (paths instanceof Collection<?> collection && collection.isEmpty()) {
      // Iceberg asks to delete empty sets (no statistics files, ...): no storage call, no span.
      if (io instanceof SupportsBulkOperations bulk) {
        bulk.deleteFiles(paths);
      }
      return;
    }
    CountedPaths counted = new CountedPaths(paths, confinement);
    TableStorageCall call = call("delete", null);
    try (RetryScope scope = RetryScope.open()) {
      try {
        if (io instanceof SupportsBulkOperations bulk) {
          bulk.deleteFiles(counted);
        } else {
          deleteOneByOne(io, counted);
        }
        call.succeeded();
      } catch (RuntimeException | Error e) {
        call.failed(e);
        throw e;
      } finally {
        call.resultCount(counted.count);
        if (counted.commonDirectory != null) {
          call.location(counted.commonDirectory);
        }
        call.retries(scope.retries(), scope.lastErrorKind());
        call.end();
      }
    }
  }

  @Override
  public Map<String, String> properties() {
    return delegate().properties();
  }

  @Override
  public void close() {
    if (delegate != null) {
      delegate.close();
    }
  }

  // ---- Hadoop configuration and credentials, passed on to the wrapped FileIO ----

  @Override
  public void setConf(Configuration configuration) {
    this.conf = new SerializableConfiguration(configuration);
    if (delegate instanceof HadoopConfigurable configurable) {
      configurable.setConf(configuration);
    }
  }

  @Override
  public Configuration getConf() {
    return conf == null ? null : conf.get();
  }

  @Override
  public void serializeConfWith(
      Function<Configuration, SerializableSupplier<Configuration>> confSerializer) {
    if (conf != null) {
      this.conf = confSerializer.apply(conf.get());
    }
    if (delegate instanceof HadoopConfigurable configurable) {
      configurable.serializeConfWith(confSerializer);
    }
  }

  @Override
  public void setCredentials(List<StorageCredential> storageCredentials) {
    this.credentials = List.copyOf(storageCredentials);
    if (delegate instanceof SupportsStorageCredentials supports) {
      supports.setCredentials(storageCredentials);
    }
  }

  @Override
  public List<StorageCredential> credentials() {
    return delegate instanceof SupportsStorageCredentials supports ? supports.credentials() : credentials;
  }

  @Override
  public String toString() {
    return "TracingFileIO(" + (delegate == null ? "uninitialized" : delegate.getClass().getSimpleName()) + ")";
  }

  // ---- tracing ----

  /** Starts a call of {@code operation} on {@code location}; the caller ends it. */
  TableStorageCall call(String operation, String location) {
    return TableStorageCall.start(telemetry(), operation, location, root);
  }

  /**
   * Runs one synchronous call. Retries are counted across the whole logical call: inside a
   * retry loop's {@link RetryScope}, every attempt of the same operation on the same location is
   * one span, ended when the loop closes the scope; a failure followed by a successful attempt
   * leaves it successful.
   */
  <T> T traced(String operation, String location, Supplier<T> body, BiConsumer<TableStorageCall, T> fields) {
    RetryScope scope = RetryScope.current();
    if (scope != null && scope.attachment() instanceof Attempts attempts
        && attempts.isSame(this, operation, location)) {
      return attempts.attempt(body, fields); // a retry of a call already traced
    }
    if (scope != null && scope.attachment() == null) {
      Attempts attempts = new Attempts(operation, location, scope);
      scope.attach(attempts, attempts::finish);
      return attempts.attempt(body, fields);
    }
    try (RetryScope own = RetryScope.open()) {
      Attempts attempts = new Attempts(operation, location, own);
      own.attach(attempts, attempts::finish);
      return attempts.attempt(body, fields);
    }
  }

  /**
   * Opens a stream as one call that {@code wrap} hands to the stream, which ends it on close;
   * a failure to open ends it at once.
   */
  <S, R> R open(String operation, String location, Supplier<S> opener, BiFunction<S, TableStorageCall, R> wrap) {
    TableStorageCall call = call(operation, location);
    S stream;
    try (RetryScope scope = RetryScope.open()) {
      try {
        stream = opener.get();
      } finally {
        call.retries(scope.retries(), scope.lastErrorKind());
      }
    } catch (RuntimeException | Error e) {
      if (e instanceof AlreadyExistsException) {
        call.conditionMet(false);
      }
      call.failed(e);
      call.end();
      throw e;
    }
    return wrap.apply(stream, call);
  }

  private Telemetry telemetry() {
    if (telemetry != null) {
      return telemetry;
    }
    Telemetry bound = telemetryBinding == null ? null : BINDINGS.get(telemetryBinding);
    return bound == null ? Telemetry.none() : bound;
  }

  private SupportsPrefixOperations prefixOperations(String what) {
    FileIO io = delegate();
    if (io instanceof SupportsPrefixOperations prefixOperations) {
      return prefixOperations;
    }
    throw new UnsupportedOperationException(
        "FileIO " + io.getClass().getName() + " cannot " + what + " (it does not implement SupportsPrefixOperations)");
  }

  /** What bulk deletion promises, for a FileIO without it: try every file, then report failures. */
  private static void deleteOneByOne(FileIO io, Iterable<String> paths) {
    int failures = 0;
    RuntimeException first = null;
    for (String path : paths) {
      try {
        io.deleteFile(path);
      } catch (RuntimeException e) {
        failures++;
        if (first == null) {
          first = e;
        }
      }
    }
    if (failures > 0) {
      BulkDeletionFailureException failure = new BulkDeletionFailureException(failures);
      failure.addSuppressed(first);
      throw failure;
    }
  }

  /** The attempts of one synchronous call, attached to the retry scope that spans them. */
  private final class Attempts {
    private final String operation;
    private final String location;
    private final RetryScope scope;
    private final TableStorageCall call;

    Attempts(String operation, String location, RetryScope scope) {
      this.operation = operation;
      this.location = location;
      this.scope = scope;
      this.call = call(operation, location);
    }

    boolean isSame(TracingFileIO io, String operation, String location) {
      return io == TracingFileIO.this && this.operation.equals(operation) && Objects.equals(this.location, location);
    }

    <T> T attempt(Supplier<T> body, BiConsumer<TableStorageCall, T> fields) {
      try {
        T result = body.get();
        call.succeeded();
        fields.accept(call, result);
        return result;
      } catch (RuntimeException | Error e) {
        call.failed(e);
        throw e;
      }
    }

    void finish() {
      call.retries(scope.retries(), scope.lastErrorKind());
      call.end();
    }
  }

  /**
   * Paths handed to a bulk deletion, counted as the FileIO consumes them (the iterable may be
   * lazy and single-use, so it is never iterated twice); the span reports the count and the
   * longest common directory of the paths.
   */
  private static final class CountedPaths implements Iterable<String> {
    private final Iterable<String> paths;
    private final LocationConfinement confinement;
    private long count;
    private String commonDirectory;

    CountedPaths(Iterable<String> paths, LocationConfinement confinement) {
      this.paths = paths;
      this.confinement = confinement;
    }

    @Override
    public Iterator<String> iterator() {
      Iterator<String> it = paths.iterator();
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          return it.hasNext();
        }

        @Override
        public String next() {
          String path = it.next();
          confinement.check(path, "table storage path");
          count++;
          commonDirectory = commonDirectory == null ? directory(path) : common(commonDirectory, path);
          return path;
        }
      };
    }
  }

  private static String directory(String path) {
    int slash = path.lastIndexOf('/');
    return slash < 0 ? "" : path.substring(0, slash + 1);
  }

  private static String common(String directory, String path) {
    int n = Math.min(directory.length(), path.length());
    int i = 0;
    while (i < n && directory.charAt(i) == path.charAt(i)) {
      i++;
    }
    return i == directory.length() ? directory : directory(directory.substring(0, i));
  }
}
