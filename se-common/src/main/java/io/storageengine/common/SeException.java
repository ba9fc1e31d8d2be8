package io.storageengine.common;

/**
 * The engine's one exception type. The message names the offending input and never contains a
 * stack trace, backend detail or credential; clients see it unless the code is INTERNAL (see
 * {@link ClientError}, which logs those under an error id instead).
 */
public class SeException extends RuntimeException {
  private final ErrorCode code;

  public SeException(ErrorCode code, String message) {
    super(message);
    this.code = code;
  }

  public SeException(ErrorCode code, String message, Throwable cause) {
    super(message, cause);
    this.code = code;
  }

  public ErrorCode code() { return code; }

  public static SeException invalid(String fmt, Object... args) {
    return new SeException(ErrorCode.INVALID_ARGUMENT, String.format(fmt, args));
  }

  public static SeException notFound(String fmt, Object... args) {
    return new SeException(ErrorCode.NOT_FOUND, String.format(fmt, args));
  }

  public static SeException unavailable(String message, Throwable cause) {
    return new SeException(ErrorCode.UNAVAILABLE, message, cause);
  }

  public static SeException internal(String message, Throwable cause) {
    return new SeException(ErrorCode.INTERNAL, message, cause);
  }

  /** The code of any throwable: an {@link SeException}'s own, INTERNAL for anything else. */
  public static ErrorCode codeOf(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof SeException se) {
        return se.code();
      }
    }
    return ErrorCode.INTERNAL;
  }
}
