package io.storageengine.catalog;

import io.storageengine.common.SeException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.MetadataUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.SupportsPrefixOperations;

/**
 * What a tenant may name and where its tables may live, checked on every way a table is created
 * or moved through the engine (the catalog wrapper, the REST facade, bulk ingest):
 *
 * <ul>
 *   <li>Identifiers are names, never paths: each namespace level and table name is non-empty, at
 *       most {@value #MAX_NAME_LENGTH} characters, not {@code .} or {@code ..}, and holds no
 *       {@code /}, {@code \} or control character.</li>
 *   <li>A table location, a namespace {@code location} property, and the table properties that
 *       redirect files ({@code write.data.path}, {@code write.metadata.path},
 *       {@code write.object-storage.path}, {@code write.folder-storage.path}) lie under the tenant's
 *       storage root ({@link LocationConfinement}); the path properties also under the table's own
 *       location, so every file of a table is where its orphan cleanup looks.</li>
 *   <li>No two tables share storage: a new table's location must hold no other files, and no
 *       directory above it (up to the root) may be another table's location (one holding
 *       {@code metadata/*.metadata.json}).</li>
 * </ul>
 * Violations are INVALID_ARGUMENT naming the offending name, property or location.
 */
public final class TableLocationPolicy {
  static final int MAX_NAME_LENGTH = 255;
  /** Table properties that place files somewhere other than the table location's defaults. */
  static final Set<String> PATH_PROPERTIES = Set.of(
      TableProperties.WRITE_DATA_LOCATION, TableProperties.WRITE_METADATA_LOCATION,
      TableProperties.OBJECT_STORE_PATH, "write.folder-storage.path");
  /** The namespace property that sets the default location of its tables. */
  static final String NAMESPACE_LOCATION = "location";
  private static final int MAX_LISTED = 1000;

  private final LocationConfinement confinement;

  public TableLocationPolicy(LocationConfinement confinement) {
    this.confinement = confinement;
  }

  public LocationConfinement confinement() {
    return confinement;
  }

  /** Checks every level of {@code namespace}. */
  public static void checkNamespace(Namespace namespace) {
    if (namespace.isEmpty()) {
      throw SeException.invalid("a namespace is required (e.g. analytics.events)");
    }
    for (String level : namespace.levels()) {
      checkName(level, "namespace level");
    }
  }

  /** Checks the namespace and the name of {@code identifier}. */
  public static void checkIdentifier(TableIdentifier identifier) {
    checkNamespace(identifier.namespace());
    checkName(identifier.name(), "table name");
  }

  /** Checks one namespace level or table name; {@code what} names it in the message. */
  public static void checkName(String name, String what) {
    if (name == null || name.isEmpty()) {
      throw SeException.invalid("%s must not be empty", what);
    }
    if (name.length() > MAX_NAME_LENGTH) {
      throw SeException.invalid("%s '%s...' is longer than %d characters", what, name.substring(0, 20), MAX_NAME_LENGTH);
    }
    if (name.equals(".") || name.equals("..")) {
      throw SeException.invalid("%s '%s' is not allowed: names are not paths", what, name);
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c == '/' || c == '\\') {
        throw SeException.invalid("%s '%s' must not contain '%c': names are not paths", what, name, c);
      }
      if (c < 0x20 || c == 0x7f) {
        throw SeException.invalid("%s must not contain control characters (found \\u%04x)", what, (int) c);
      }
    }
  }

  /** An explicit table location (null when the catalog picks one). */
  public void checkTableLocation(String location) {
    if (location != null) {
      confinement.check(location, "table location");
    }
  }

  /** Namespace properties being set: a {@code location} must lie under the root. */
  public void checkNamespaceProperties(Map<String, String> properties) {
    if (properties != null && properties.get(NAMESPACE_LOCATION) != null) {
      confinement.check(properties.get(NAMESPACE_LOCATION), "namespace property 'location'");
    }
  }

  /**
   * Table properties being set on a table at {@code tableLocation} (null while it is not known
   * yet: then the root alone bounds them).
   */
  public void checkTableProperties(Map<String, String> properties, String tableLocation) {
    if (properties == null) {
      return;
    }
    for (String key : PATH_PROPERTIES) {
      String value = properties.get(key);
      if (value == null) {
        continue;
      }
      confinement.check(value, "table property '" + key + "'");
      if (tableLocation != null && !LocationConfinement.isUnder(value, tableLocation)) {
        throw SeException.invalid("table property '%s' = '%s' must lie under the table location '%s'",
            key, value, tableLocation);
      }
    }
  }

  /**
   * The changes of a table commit (REST {@code updates}): a new location and path properties
   * are checked as at creation. {@code currentLocation} is the table's location before the commit
   * (null for a create).
   */
  public void checkUpdates(List<MetadataUpdate> updates, String currentLocation) {
    String location = currentLocation;
    for (MetadataUpdate update : updates) {
      if (update instanceof MetadataUpdate.SetLocation setLocation) {
        checkTableLocation(setLocation.location());
        location = setLocation.location();
      }
    }
    for (MetadataUpdate update : updates) {
      if (update instanceof MetadataUpdate.SetProperties set) {
        checkTableProperties(set.updated(), location);
      }
    }
  }

  /** A metadata file to register as a table must lie under the root. */
  public void checkRegister(String metadataFileLocation) {
    confinement.check(metadataFileLocation, "metadata file");
  }

  /**
   * Checks that the table just created shares its storage with no other table; see the class
   * comment. Returns normally when it does not, and when its FileIO cannot list (nothing to
   * compare against); throws INVALID_ARGUMENT naming both locations otherwise.
   */
  public void checkNoOverlap(Table table) {
    String location = trimSlash(table.location());
    confinement.check(location, "table location");
    FileIO io = table.io();
    String ownMetadata = table instanceof BaseTable base && base.operations().current() != null
        ? base.operations().current().metadataFileLocation() : null;
    for (String file : list(io, location + "/")) {
      if (ownMetadata == null || !sameFile(file, ownMetadata)) {
        throw SeException.invalid("table location '%s' already holds files (e.g. '%s'): "
            + "a table needs a location of its own", location, file);
      }
    }
    String root = confinement.root().map(TableLocationPolicy::trimSlash).orElse(null);
    for (String ancestor = parent(location); ancestor != null; ancestor = parent(ancestor)) {
      if (root != null && !LocationConfinement.isUnder(ancestor, root)) {
        break;
      }
      for (String file : list(io, ancestor + "/metadata/")) {
        if (file.endsWith(".metadata.json")) {
          throw SeException.invalid("table location '%s' lies inside the location of another table ('%s')",
              location, ancestor);
        }
      }
      if (root != null && LocationConfinement.isUnder(root, ancestor)) {
        break; // the root itself was checked
      }
    }
  }

  /**
   * Whether any file is stored under {@code location} (e.g. one left by a table dropped without
   * purge); false when it does not exist or {@code io} cannot list.
   */
  public static boolean holdsFiles(FileIO io, String location) {
    return !list(io, trimSlash(location) + "/").isEmpty();
  }

  /** Up to {@value #MAX_LISTED} files under {@code prefix}; empty when it does not exist or cannot be listed. */
  static List<String> list(FileIO io, String prefix) {
    List<String> out = new ArrayList<>();
    Path local = localPath(prefix);
    if (local != null) {
      if (!Files.isDirectory(local)) {
        return out;
      }
      try (Stream<Path> walk = Files.walk(local)) {
        walk.filter(Files::isRegularFile).limit(MAX_LISTED).forEach(p -> out.add(p.toString()));
      } catch (IOException | UncheckedIOException e) {
        return out;
      }
      return out;
    }
    FileIO real = io instanceof TracingFileIO tracing ? tracing.delegate() : io;
    if (!(real instanceof SupportsPrefixOperations)) {
      return out;
    }
    try {
      for (FileInfo info : ((SupportsPrefixOperations) io).listPrefix(prefix)) {
        out.add(info.location());
        if (out.size() >= MAX_LISTED) {
          break;
        }
      }
    } catch (RuntimeException e) {
      if (e instanceof SeException) {
        throw e;
      }
      // A prefix that does not exist may fail to list on some stores: nothing is there.
    }
    return out;
  }

  private static boolean sameFile(String listed, String metadataLocation) {
    int slash = listed.lastIndexOf('/');
    String name = listed.substring(slash + 1);
    if (name.startsWith(".") && name.endsWith(".crc")) {
      // Hadoop's local file system writes a checksum ".<name>.crc" beside each file.
      listed = listed.substring(0, slash + 1) + name.substring(1, name.length() - ".crc".length());
    }
    Path a = localPath(listed);
    Path b = localPath(metadataLocation);
    if (a != null && b != null) {
      return a.normalize().equals(b.normalize());
    }
    return LocationConfinement.isUnder(listed, metadataLocation) && LocationConfinement.isUnder(metadataLocation, listed);
  }

  /** The local path of a {@code file:} location or plain absolute path; null for remote storage. */
  static Path localPath(String location) {
    if (location.startsWith("file://")) {
      String rest = location.substring("file://".length());
      if (rest.startsWith("localhost/")) {
        rest = rest.substring("localhost".length());
      }
      return Path.of(rest);
    }
    if (location.startsWith("file:")) {
      return Path.of(location.substring("file:".length()));
    }
    return location.startsWith("/") ? Path.of(location) : null;
  }

  private static String parent(String location) {
    String trimmed = trimSlash(location);
    int slash = trimmed.lastIndexOf('/');
    if (slash <= 0) {
      return null;
    }
    String parent = trimmed.substring(0, slash);
    // Stop at the scheme and authority: "s3://bucket" or "file:" has no parent we could list.
    if (parent.endsWith(":") || parent.endsWith(":/") || parent.matches("^[A-Za-z][A-Za-z0-9+.-]*://[^/]*$")) {
      return null;
    }
    return parent;
  }

  private static String trimSlash(String location) {
    String s = location;
    while (s.length() > 1 && s.endsWith("/")) {
      s = s.substring(0, s.length() - 1);
    }
    return s;
  }
}
