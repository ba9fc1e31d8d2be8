package io.storageengine.reconcile.maintenance;

import io.storageengine.catalog.LocationConfinement;
import io.storageengine.catalog.TracingFileIO;
import io.storageengine.duckdb.DataFileLocations;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.ReachableFileUtil;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StatisticsFile;
import org.apache.iceberg.PartitionStatisticsFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.SupportsPrefixOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes files under the table's location that no snapshot, manifest or metadata file
 * references and that are older than the orphan age: leftovers of crashed passes, of commits
 * whose outcome was unknown, and of files a failed cleanup could not delete. The age protects
 * files of commits still in progress (written before they are referenced).
 *
 * <p>Only the table's own files are candidates: Iceberg files ({@link #isTableFile}) under its
 * {@code data/} and {@code metadata/} directories, with the location inside the tenant's storage
 * root. When the location turns out to be shared with another table (a metadata file of another
 * table UUID in {@code metadata/}, or any table metadata under {@code data/}), nothing is
 * deleted: the files of a table that is not this one are never judged by this one's references.
 *
 * <p>Locations are compared by their path, in both the raw and the percent-decoded form,
 * ignoring scheme and authority and repeated slashes: a listing may spell a location
 * differently from the metadata ({@code file:/a/b} vs {@code file:///a//b}), and a file is
 * deleted only when no form matches.
 */
final class OrphanFileCleaner {
  private static final Logger LOG = LoggerFactory.getLogger(OrphanFileCleaner.class);
  private static final Pattern CHECKSUM = Pattern.compile("^(.*/)\\.([^/]+)\\.crc$");
  private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:");

  private OrphanFileCleaner() {}

  /**
   * Returns the number of files deleted; 0 when the table's FileIO cannot list, and when the
   * table's storage is not its own (see the class comment): then nothing is deleted and a WARN
   * says why.
   */
  static int clean(Table table, MaintenancePolicy policy, long nowMillis) {
    String root = table.location().endsWith("/") ? table.location() : table.location() + "/";
    LocationConfinement confinement = LocationConfinement.of(table);
    if (!confinement.contains(table.location())) {
      LOG.warn("table {}: location {} is outside the catalog's storage root ({}); orphan cleanup skipped",
          table.name(), table.location(), confinement);
      return 0;
    }
    Path localRoot = DataFileLocations.localPath(root);
    if (localRoot == null && !canList(table.io())) {
      LOG.debug("table {}: FileIO {} cannot list files; orphan cleanup skipped", table.name(),
          table.io().getClass().getSimpleName());
      return 0;
    }
    table.refresh();
    // References first: a file committed after this point is younger than the orphan age.
    Set<String> referenced = referenced(table);
    long cutoff = nowMillis - policy.orphanAge().toMillis();
    List<String> orphans = new ArrayList<>();
    for (String dir : SCOPES) {
      String scope = root + dir;
      Path localScope = localRoot == null ? null : localRoot.resolve(dir);
      for (FileInfo file : localScope != null ? listLocal(localScope) : listRemote(table, scope)) {
        if (file.createdAtMillis() >= cutoff || isReferenced(referenced, file.location())) {
          continue;
        }
        String foreign = foreignTable(table, dir, file.location());
        if (foreign != null) {
          LOG.warn("table {}: its location {} holds files of another table ({}); orphan cleanup skipped: "
              + "give each table a location of its own", table.name(), table.location(), foreign);
          return 0;
        }
        if (isTableFile(file.location())) {
          orphans.add(file.location());
        }
      }
    }
    int deleted = 0;
    for (String location : orphans) {
      try {
        confinement.check(location, "orphan file");
        if (localRoot != null) {
          Files.deleteIfExists(Path.of(location));
        } else {
          table.io().deleteFile(location);
        }
        deleted++;
        LOG.debug("table {}: deleted orphan file {}", table.name(), location);
      } catch (IOException | RuntimeException e) {
        LOG.warn("table {}: could not delete orphan file {}: {}", table.name(), location, e.getMessage());
      }
    }
    if (deleted > 0) {
      LOG.info("table {}: deleted {} orphan files", table.name(), deleted);
    }
    return deleted;
  }

  /**
   * Where a table's own files are: Iceberg writes data and delete files under {@code data/} and
   * metadata, manifests and statistics under {@code metadata/} (path properties that would move
   * them elsewhere are refused by the engine). Nothing else under the location is looked at.
   */
  private static final List<String> SCOPES = List.of("data/", "metadata/");
  /** Endings of the files Iceberg and the engine write; no other file is ever deleted. */
  private static final List<String> TABLE_FILE_ENDINGS = List.of(
      ".parquet", ".avro", ".orc", ".puffin", ".metadata.json", ".stats", ".crc", "version-hint.text");

  static boolean isTableFile(String location) {
    for (String ending : TABLE_FILE_ENDINGS) {
      if (location.endsWith(ending)) {
        return true;
      }
    }
    return false;
  }

  /**
   * A description of the other table whose storage overlaps this one, or null: an unreferenced
   * table metadata file under {@code data/} (a table nested inside this one's data), or one
   * under {@code metadata/} whose table UUID is not this table's (a table sharing the location).
   */
  private static String foreignTable(Table table, String scope, String location) {
    if (!location.endsWith(".metadata.json")) {
      return null;
    }
    if (scope.equals("data/")) {
      return "table metadata at " + location;
    }
    try {
      String uuid = TableMetadataParser.read(table.io(), location).uuid();
      return uuid.equals(table.uuid().toString()) ? null : "table " + uuid;
    } catch (RuntimeException e) {
      return "unreadable table metadata at " + location;
    }
  }

  /**
   * Files under a local directory. Walked directly rather than through Hadoop's local file
   * system, which runs a process per file for its permissions and fails the whole listing when
   * a file vanishes meanwhile (a failed commit cleaning up); here such a file is just skipped.
   */
  private static List<FileInfo> listLocal(Path root) {
    List<FileInfo> files = new ArrayList<>();
    if (!Files.isDirectory(root)) {
      return files;
    }
    try {
      Files.walkFileTree(root, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
          if (attrs.isRegularFile()) {
            files.add(new FileInfo(file.toString(), attrs.size(), attrs.lastModifiedTime().toMillis()));
          }
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFileFailed(Path file, IOException e) {
          return FileVisitResult.CONTINUE;
        }
      });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return files;
  }

  /** Whether {@code io} lists prefixes; a tracing wrapper lists exactly when what it wraps does. */
  static boolean canList(FileIO io) {
    FileIO real = io instanceof TracingFileIO tracing ? tracing.delegate() : io;
    return real instanceof SupportsPrefixOperations;
  }

  /** Files under a remote prefix; a listing that fails midway is retried from the start. */
  private static List<FileInfo> listRemote(Table table, String root) {
    SupportsPrefixOperations io = (SupportsPrefixOperations) table.io();
    for (int attempt = 1; ; attempt++) {
      try {
        List<FileInfo> files = new ArrayList<>();
        io.listPrefix(root).forEach(files::add);
        return files;
      } catch (RuntimeException e) {
        if (attempt >= 3) {
          throw e;
        }
      }
    }
  }

  /** Every file reachable from the table's metadata, in all its comparison forms. */
  static Set<String> referenced(Table table) {
    Set<String> refs = new HashSet<>();
    ReachableFileUtil.metadataFileLocations(table, false).forEach(l -> addForms(refs, l));
    addForms(refs, ReachableFileUtil.versionHintLocation(table));
    for (StatisticsFile f : table.statisticsFiles()) {
      addForms(refs, f.path());
    }
    for (PartitionStatisticsFile f : table.partitionStatisticsFiles()) {
      addForms(refs, f.path());
    }
    Set<String> manifestsSeen = new HashSet<>();
    for (Snapshot snapshot : table.snapshots()) {
      if (snapshot.manifestListLocation() != null) {
        addForms(refs, snapshot.manifestListLocation());
      }
      for (ManifestFile manifest : snapshot.allManifests(table.io())) {
        if (!manifestsSeen.add(manifest.path())) {
          continue;
        }
        addForms(refs, manifest.path());
        try (ManifestReader<? extends ContentFile<?>> reader = manifest.content() == ManifestContent.DATA
            ? ManifestFiles.read(manifest, table.io(), table.specs())
            : ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs())) {
          for (ContentFile<?> file : reader) {
            addForms(refs, file.location());
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
    return refs;
  }

  /**
   * True when a form of {@code location} is referenced. Hadoop's local file system keeps a
   * checksum {@code .<name>.crc} next to each file it writes: it lives and dies with its file.
   */
  static boolean isReferenced(Set<String> referenced, String location) {
    Matcher checksum = CHECKSUM.matcher(location);
    if (checksum.matches()) {
      return isReferenced(referenced, checksum.group(1) + checksum.group(2));
    }
    for (String form : forms(location)) {
      if (referenced.contains(form)) {
        return true;
      }
    }
    return false;
  }

  private static void addForms(Set<String> refs, String location) {
    refs.addAll(forms(location));
  }

  /** The path of a location without scheme and authority, raw and percent-decoded. */
  static List<String> forms(String location) {
    String rest = location;
    Matcher m = SCHEME.matcher(rest);
    if (m.find()) {
      rest = rest.substring(m.end());
    }
    if (rest.startsWith("//")) {
      int slash = rest.indexOf('/', 2);
      rest = slash < 0 ? "/" : rest.substring(slash);
    }
    // Writers may join directories with a doubled slash ("data//f.parquet"): same file.
    rest = "/" + rest.replaceAll("/{2,}", "/").replaceFirst("^/+", "");
    String decoded = percentDecode(rest);
    return decoded.equals(rest) ? List.of(rest) : List.of(rest, decoded);
  }

  private static String percentDecode(String s) {
    if (s.indexOf('%') < 0) {
      return s;
    }
    byte[] out = new byte[s.length()];
    int n = 0;
    byte[] raw = s.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < raw.length; i++) {
      if (raw[i] == '%' && i + 2 < raw.length && hex(raw[i + 1]) >= 0 && hex(raw[i + 2]) >= 0) {
        out[n++] = (byte) (hex(raw[i + 1]) * 16 + hex(raw[i + 2]));
        i += 2;
      } else {
        if (n == out.length) {
          out = java.util.Arrays.copyOf(out, out.length * 2);
        }
        out[n++] = raw[i];
      }
    }
    return new String(out, 0, n, StandardCharsets.UTF_8);
  }

  private static int hex(byte b) {
    return Character.digit((char) b, 16);
  }
}
