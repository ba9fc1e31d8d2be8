package io.storageengine.catalog;

import io.storageengine.common.SeException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.FileIO;

/**
 * The storage root of one tenant and the rule that every path the engine writes, reads or deletes
 * for that tenant lies under it. A tenant's root is its warehouse ({@code sql} and
 * {@code embedded} catalogs) or the {@value #ROOT_PROPERTY} of a {@code rest} catalog; a
 * {@code rest} catalog without one is {@linkplain #unconfined() unconfined}: its upstream assigns
 * locations and only the per-table rules apply.
 *
 * <p>Locations are compared on a normalized form: scheme (with {@code s3a} and {@code s3n} read
 * as {@code s3}), authority (the bucket) and the path's segments, percent-decoded, with empty
 * segments dropped. A location is refused outright, whatever the root, when it has a {@code .} or
 * {@code ..} segment (also percent-encoded), an encoded slash or backslash, a backslash, a control
 * character, a {@code file:} authority other than {@code localhost}, or no scheme and no leading
 * slash. For local paths the real path is compared too, so a symbolic link inside the root that
 * points out of it does not let a path escape.
 */
public final class LocationConfinement implements java.io.Serializable {
  private static final long serialVersionUID = 1L;
  /** Catalog (and FileIO) property naming the root; set by {@link CatalogFactory}. */
  public static final String ROOT_PROPERTY = "se.storage-root";

  private static final LocationConfinement UNCONFINED = new LocationConfinement(null, null);

  private final String root;
  private final Parsed parsedRoot;

  private LocationConfinement(String root, Parsed parsedRoot) {
    this.root = root;
    this.parsedRoot = parsedRoot;
  }

  /** No tenant root: only well-formedness is checked. */
  public static LocationConfinement unconfined() {
    return UNCONFINED;
  }

  /** Confinement under {@code root}; INVALID_ARGUMENT when {@code root} is not a well-formed location. */
  public static LocationConfinement under(String root) {
    Objects.requireNonNull(root, "root");
    return new LocationConfinement(root, parse(root, "storage root"));
  }

  /** From catalog or FileIO properties: {@link #under} the {@value #ROOT_PROPERTY}, or unconfined. */
  public static LocationConfinement fromProperties(java.util.Map<String, String> properties) {
    String root = properties.get(ROOT_PROPERTY);
    return root == null || root.isBlank() ? UNCONFINED : under(root);
  }

  /** The confinement a table's FileIO enforces (the tenant's); unconfined for a FileIO of another kind. */
  public static LocationConfinement of(Table table) {
    return of(table.io());
  }

  /** The confinement {@code io} enforces; unconfined unless it is the engine's {@link TracingFileIO}. */
  public static LocationConfinement of(FileIO io) {
    return io instanceof TracingFileIO tracing ? tracing.confinement() : UNCONFINED;
  }

  /** The root, when confined. */
  public Optional<String> root() {
    return Optional.ofNullable(root);
  }

  /** True when {@code location} is well formed and (when confined) under the root. */
  public boolean contains(String location) {
    try {
      check(location, "location");
      return true;
    } catch (SeException e) {
      return false;
    }
  }

  /**
   * Throws INVALID_ARGUMENT naming {@code what} and the location when it is malformed or outside
   * the root. The message names the tenant's own root, never any other path of the server.
   */
  public void check(String location, String what) {
    Parsed parsed = parse(location, what);
    if (parsedRoot == null) {
      return;
    }
    if (!parsed.isUnder(parsedRoot) || !realPathUnder(parsed, parsedRoot)) {
      throw SeException.invalid("%s '%s' is outside the catalog's storage root '%s': "
          + "table locations and files must lie under it", what, location, root);
    }
  }

  /** Throws INVALID_ARGUMENT naming {@code what} when {@code location} is not a well-formed location. */
  public static void checkWellFormed(String location, String what) {
    parse(location, what);
  }

  /** True when one of the two locations is, or lies under, the other. Malformed ones overlap everything. */
  public static boolean overlaps(String a, String b) {
    Parsed pa;
    Parsed pb;
    try {
      pa = parse(a, "location");
      pb = parse(b, "location");
    } catch (SeException e) {
      return true;
    }
    return pa.isUnder(pb) || pb.isUnder(pa);
  }

  /** True when {@code location} is {@code ancestor} or lies under it (false for malformed ones). */
  public static boolean isUnder(String location, String ancestor) {
    try {
      return parse(location, "location").isUnder(parse(ancestor, "location"));
    } catch (SeException e) {
      return false;
    }
  }

  @Override
  public String toString() {
    return root == null ? "unconfined" : "under " + root;
  }

  /** A location split into scheme family, authority and decoded path segments. */
  private record Parsed(String scheme, String authority, List<String> segments) implements java.io.Serializable {
    boolean isUnder(Parsed ancestor) {
      return scheme.equals(ancestor.scheme) && authority.equals(ancestor.authority)
          && segments.size() >= ancestor.segments.size()
          && segments.subList(0, ancestor.segments.size()).equals(ancestor.segments);
    }

    Path localPath() {
      return Path.of("/" + String.join("/", segments));
    }
  }

  private static Parsed parse(String location, String what) {
    if (location == null || location.isBlank()) {
      throw SeException.invalid("%s: a location is required", what);
    }
    for (int i = 0; i < location.length(); i++) {
      char c = location.charAt(i);
      if (c < 0x20 || c == 0x7f) {
        throw SeException.invalid("%s '%s': control characters are not allowed in a location", what, printable(location));
      }
      if (c == '\\') {
        throw SeException.invalid("%s '%s': backslashes are not allowed in a location", what, location);
      }
    }
    String scheme;
    String authority;
    String path;
    int colon = location.indexOf(':');
    int slash = location.indexOf('/');
    if (location.startsWith("/")) {
      scheme = "file";
      authority = "";
      path = location;
    } else if (colon > 0 && (slash < 0 || colon < slash)) {
      scheme = location.substring(0, colon).toLowerCase(Locale.ROOT);
      String rest = location.substring(colon + 1);
      if (rest.startsWith("//")) {
        int end = rest.indexOf('/', 2);
        authority = end < 0 ? rest.substring(2) : rest.substring(2, end);
        path = end < 0 ? "/" : rest.substring(end);
      } else {
        authority = "";
        path = rest;
      }
      if (scheme.equals("s3a") || scheme.equals("s3n")) {
        scheme = "s3";
      }
      if (scheme.equals("file")) {
        if (!authority.isEmpty() && !authority.equalsIgnoreCase("localhost")) {
          throw SeException.invalid("%s '%s': a file location must not name a host", what, location);
        }
        authority = "";
        if (!path.startsWith("/")) {
          throw SeException.invalid("%s '%s': a file location must be an absolute path", what, location);
        }
      } else if (authority.isEmpty()) {
        throw SeException.invalid("%s '%s': expected <scheme>://<bucket>/<path> or an absolute path", what, location);
      }
      int query = path.indexOf('?');
      if (query >= 0 || path.indexOf('#') >= 0) {
        throw SeException.invalid("%s '%s': a location must not carry a query or fragment", what, location);
      }
    } else {
      throw SeException.invalid("%s '%s': expected an absolute path or a URI such as s3://bucket/path", what, location);
    }
    List<String> segments = new ArrayList<>();
    for (String raw : path.split("/")) {
      if (raw.isEmpty()) {
        continue;
      }
      String lower = raw.toLowerCase(Locale.ROOT);
      if (lower.contains("%2f") || lower.contains("%5c") || lower.contains("%00")) {
        throw SeException.invalid("%s '%s': encoded slashes are not allowed in a location", what, location);
      }
      String decoded = percentDecode(raw);
      if (decoded.equals(".") || decoded.equals("..")) {
        throw SeException.invalid("%s '%s': '.' and '..' segments are not allowed in a location", what, location);
      }
      segments.add(decoded);
    }
    return new Parsed(scheme, authority, List.copyOf(segments));
  }

  /**
   * For local paths: the real path of the longest existing prefix of {@code location} lies under
   * the real path of the root, so a symbolic link cannot lead out. Remote stores have no links.
   */
  private static boolean realPathUnder(Parsed location, Parsed root) {
    if (!location.scheme().equals("file")) {
      return true;
    }
    Path rootReal = existingRealPath(root.localPath());
    Path path = location.localPath();
    Path existing = path;
    while (existing != null && !Files.exists(existing, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      return true;
    }
    Path real;
    try {
      real = existing.toRealPath();
    } catch (IOException e) {
      return false; // a dangling link, or a path we may not resolve: refuse
    }
    // Either inside the root's real path, or a prefix of it (the root's directories do not exist
    // yet; the path was already found to lie under the root segment by segment).
    return real.startsWith(rootReal) || rootReal.startsWith(real);
  }

  private static Path existingRealPath(Path path) {
    Path existing = path;
    List<Path> missing = new ArrayList<>();
    while (existing != null && !Files.exists(existing)) {
      missing.add(0, existing.getFileName());
      existing = existing.getParent();
    }
    if (existing == null) {
      return path;
    }
    try {
      Path real = existing.toRealPath();
      for (Path name : missing) {
        real = real.resolve(name);
      }
      return real;
    } catch (IOException e) {
      return path;
    }
  }

  private static String percentDecode(String s) {
    if (s.indexOf('%') < 0) {
      return s;
    }
    byte[] raw = s.getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[raw.length];
    int n = 0;
    for (int i = 0; i < raw.length; i++) {
      int hi = i + 2 < raw.length ? Character.digit(raw[i + 1], 16) : -1;
      int lo = i + 2 < raw.length ? Character.digit(raw[i + 2], 16) : -1;
      if (raw[i] == '%' && hi >= 0 && lo >= 0) {
        out[n++] = (byte) (hi * 16 + lo);
        i += 2;
      } else {
        out[n++] = raw[i];
      }
    }
    return new String(out, 0, n, StandardCharsets.UTF_8);
  }

  private static String printable(String s) {
    StringBuilder b = new StringBuilder();
    for (char c : s.toCharArray()) {
      b.append(c < 0x20 || c == 0x7f ? String.format("\\u%04x", (int) c) : String.valueOf(c));
    }
    return b.toString();
  }
}
