package io.storageengine.query;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns DuckDB failures into {@link SeException}s. Errors about the statement (parser, binder,
 * conversion) are the caller's and keep DuckDB's first message line; errors about the engine
 * (I/O, internal) are logged and reported without detail, since they may name server paths.
 */
final class DuckDbErrors {
  private static final Logger LOG = LoggerFactory.getLogger(DuckDbErrors.class);

  private DuckDbErrors() {}

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
      return new SeException(ErrorCode.RESOURCE_EXHAUSTED, "query needs more memory than the server allows", e);
    }
    if (first.startsWith("IO Error") || first.startsWith("INTERNAL Error") || first.startsWith("FATAL")
        || first.startsWith("Connection Error") || first.isEmpty()) {
      LOG.warn("query execution failed: {}", first);
      return SeException.internal("query execution failed", e);
    }
    return new SeException(ErrorCode.INVALID_ARGUMENT, "query failed: " + first, e);
  }
}
