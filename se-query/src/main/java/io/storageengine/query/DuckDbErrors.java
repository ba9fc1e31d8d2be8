package io.storageengine.query;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns DuckDB failures into {@link SeException}s. Errors about the statement (parser, binder,
 * conversion) are the caller's and keep DuckDB's first message line, {@linkplain #scrub scrubbed}
 * of file system paths; errors about the engine (I/O, internal) are logged and reported without
 * detail, and permission errors (the second wall: a file or setting the database may not touch)
 * are reported without the path or setting DuckDB names.
 */
final class DuckDbErrors {
  private static final Logger LOG = LoggerFactory.getLogger(DuckDbErrors.class);
  /** What a scrubbed path reads as. */
  static final String PATH = "<path>";
  /**
   * An absolute path or file URI: a {@code /} (or drive letter) that starts a token, up to a quote,
   * whitespace or closing bracket. {@code a/b} (division, ratios) does not start a token.
   */
  private static final Pattern ABSOLUTE_PATH = Pattern.compile(
      "(?:file:)?(?:\\b[A-Za-z]:[\\\\/]|(?<![\\w.)\\]}>])/)[^\\s'\"`,;)\\]}]+");

  private DuckDbErrors() {}

  /**
   * {@code message} without file system paths: the server's home, temporary and working
   * directories wherever they appear, and any absolute path, each replaced by {@value #PATH}.
   */
  static String scrub(String message) {
    String out = ABSOLUTE_PATH.matcher(message).replaceAll(Matcher.quoteReplacement(PATH));
    for (String property : List.of("user.home", "java.io.tmpdir", "user.dir")) {
      String directory = System.getProperty(property);
      if (directory != null && directory.length() > 1) {
        out = out.replace(directory, PATH);
      }
    }
    return out;
  }

  static SeException translate(Exception e) {
    if (e instanceof SeException se) {
      return se;
    }
    String message = e.getMessage() == null ? "" : e.getMessage();
    int newline = message.indexOf('\n');
    String first = (newline < 0 ? message : message.substring(0, newline)).trim();
    if (first.startsWith("Permission Error")) {
      return SeException.invalid("query refused: it tries to access files or settings, which is not allowed");
    }
    if (first.startsWith("Out of Memory Error")) {
      return new SeException(ErrorCode.RESOURCE_EXHAUSTED, "query needs more memory than the server allows a query (--query.memory-limit)", e);
    }
    if (first.startsWith("IO Error") || first.startsWith("INTERNAL Error") || first.startsWith("FATAL")
        || first.startsWith("Connection Error") || first.isEmpty()) {
      LOG.warn("query execution failed: {}", first);
      return SeException.internal("query execution failed", e);
    }
    return new SeException(ErrorCode.INVALID_ARGUMENT, "query failed: " + scrub(first), e);
  }
}
