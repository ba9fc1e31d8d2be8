package io.storageengine.catalog;

/**
 * A hook around every catalog operation made through a {@link LoggingCatalog}, for tracing and
 * metrics. {@link #begin} is called on the calling thread just before the operation and the
 * returned {@link Operation#end} just after it, on the same thread, so an implementation can
 * open a span and make it current for the duration (nested HTTP or JDBC calls become children).
 *
 * <p>Implementations receive only the catalog id and the operation name, never arguments, and
 * must not throw: a failing listener is logged and ignored.
 */
@FunctionalInterface
public interface OperationListener {
  /** Does nothing. */
  OperationListener NONE = (catalogId, operation) -> Operation.NONE;

  /** Called before {@code operation} (a method name such as {@code loadTable}) runs. */
  Operation begin(String catalogId, String operation);

  /** One running operation. */
  @FunctionalInterface
  interface Operation {
    Operation NONE = failure -> {};

    /** Called once when the operation returns ({@code failure} null) or throws. */
    void end(Throwable failure);

    /** Called with the operation's return value before {@link #end} (e.g. to count a list). */
    default void result(Object value) {}
  }
}
