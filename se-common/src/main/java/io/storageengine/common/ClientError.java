package io.storageengine.common;

import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a client is told about a failure: the engine's one classification of any throwable into
 * an {@link ErrorCode} and a message safe to show. The protocol adapters ({@link FlightErrors},
 * {@link HttpErrors}) only render it.
 *
 * <p>The rules, in order:
 * <ol>
 *   <li>{@link CompletionException} and {@link ExecutionException} are unwrapped.</li>
 *   <li>A throwable of a {@linkplain #KNOWN_TYPES known type} (Iceberg's catalog exceptions,
 *       {@link IllegalArgumentException}, {@link UnsupportedOperationException}) gets that type's
 *       code and keeps the first line of its message; {@link #type()} names the type.</li>
 *   <li>Otherwise the first {@link SeException} in the cause chain gives its code and message, and
 *       the first memory limit (Java's {@link OutOfMemoryError} or Arrow's
 *       {@code OutOfMemoryException}) gives RESOURCE_EXHAUSTED.</li>
 *   <li>Anything else is INTERNAL.</li>
 * </ol>
 * Messages of every category but INTERNAL reach the client. An INTERNAL error never shows its
 * message: it is logged here, with its stack trace, under a fresh error id, and the client gets a
 * generic message naming that id.
 *
 * @param code the error code
 * @param message what the client is shown
 * @param type the simple name of the known exception type it was classified from (what error
 *     models that name a type, like Iceberg REST's, report), or null
 * @param errorId for INTERNAL errors, the id the failure was logged under; otherwise null
 */
public record ClientError(ErrorCode code, String message, String type, String errorId) {
  private static final Logger LOG = LoggerFactory.getLogger(ClientError.class);

  /** A known exception type's code; a non-null {@code message} replaces the exception's own. */
  private record Rule(ErrorCode code, String message) {}

  /**
   * Exceptions of other libraries, by class name so that this module needs none of them (a
   * subclass matches too). Names are checked against the real classes by the tests.
   */
  static final Map<String, Rule> KNOWN_TYPES = Map.ofEntries(
      iceberg("NoSuchTableException", ErrorCode.NOT_FOUND),
      iceberg("NoSuchNamespaceException", ErrorCode.NOT_FOUND),
      iceberg("NoSuchViewException", ErrorCode.NOT_FOUND),
      // A file the catalog points at is missing (e.g. a table's metadata file): not retryable.
      iceberg("NotFoundException", ErrorCode.NOT_FOUND),
      // Server-side scan planning: a plan id the server does not know, a plan task it cannot answer.
      iceberg("NoSuchPlanIdException", ErrorCode.NOT_FOUND),
      iceberg("NoSuchPlanTaskException", ErrorCode.NOT_FOUND),
      iceberg("AlreadyExistsException", ErrorCode.ALREADY_EXISTS),
      iceberg("CommitFailedException", ErrorCode.CONFLICT),
      iceberg("NamespaceNotEmptyException", ErrorCode.CONFLICT),
      iceberg("ForbiddenException", ErrorCode.FORBIDDEN),
      iceberg("NotAuthorizedException", ErrorCode.UNAUTHENTICATED),
      iceberg("ServiceUnavailableException", ErrorCode.UNAVAILABLE),
      iceberg("BadRequestException", ErrorCode.INVALID_ARGUMENT),
      iceberg("ValidationException", ErrorCode.INVALID_ARGUMENT),
      Map.entry("org.apache.iceberg.exceptions.CommitStateUnknownException",
          new Rule(ErrorCode.INTERNAL, "commit state unknown")),
      Map.entry(IllegalArgumentException.class.getName(), new Rule(ErrorCode.INVALID_ARGUMENT, null)),
      Map.entry(UnsupportedOperationException.class.getName(), new Rule(ErrorCode.UNSUPPORTED, null)));

  /** Arrow's allocation-limit exception (in arrow-memory-core). */
  static final String ARROW_OUT_OF_MEMORY = "org.apache.arrow.memory.OutOfMemoryException";

  /** How far down a cause chain to look (a chain can be made circular). */
  private static final int MAX_CAUSE_DEPTH = 64;

  static final String MEMORY_LIMIT_MESSAGE =
      "memory limit exceeded: the request needs more memory than the server allows; send smaller batches";

  /** The client error for {@code error}; an INTERNAL one is logged here first. */
  public static ClientError of(Throwable error) {
    Throwable t = unwrap(error);
    for (Class<?> c = t.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
      Rule rule = KNOWN_TYPES.get(c.getName());
      if (rule != null) {
        String message = rule.message() != null ? rule.message() : firstLine(t.getMessage(), c.getSimpleName());
        return !rule.code().messageIsPublic()
            ? internal(t, message, c.getSimpleName())
            : new ClientError(rule.code(), message, c.getSimpleName(), null);
      }
    }
    int depth = 0;
    for (Throwable c = t; c != null && depth < MAX_CAUSE_DEPTH; c = c.getCause(), depth++) {
      if (c instanceof SeException se) {
        return se.code().messageIsPublic()
            ? new ClientError(se.code(), se.getMessage(), null, null)
            : internal(se, null, null);
      }
      if (c instanceof OutOfMemoryError || c.getClass().getName().equals(ARROW_OUT_OF_MEMORY)) {
        if (c instanceof OutOfMemoryError) {
          LOG.warn("request failed: the JVM is out of memory", c);
        }
        return new ClientError(ErrorCode.RESOURCE_EXHAUSTED, MEMORY_LIMIT_MESSAGE, null, null);
      }
    }
    return internal(t, null, null);
  }

  /** {@code error} without its {@link CompletionException} / {@link ExecutionException} wrappers. */
  public static Throwable unwrap(Throwable error) {
    Throwable c = error;
    while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }

  /** This error with {@link #type()} replaced, for error models that type a failure by what it was about. */
  public ClientError withType(String newType) {
    return new ClientError(code, message, newType, errorId);
  }

  private static ClientError internal(Throwable t, String message, String type) {
    String id = String.format("%012x", ThreadLocalRandom.current().nextLong() >>> 16);
    LOG.error("internal error {}: {}", id, t.toString(), t);
    String shown = (message == null ? "internal error" : message) + " (error id " + id + "): see the server log";
    return new ClientError(ErrorCode.INTERNAL, shown, type, id);
  }

  private static Map.Entry<String, Rule> iceberg(String simpleName, ErrorCode code) {
    return Map.entry("org.apache.iceberg.exceptions." + simpleName, new Rule(code, null));
  }

  private static String firstLine(String message, String fallback) {
    if (message == null || message.isBlank()) {
      return fallback;
    }
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }
}
