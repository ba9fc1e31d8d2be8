package io.storageengine.common;

import java.util.ArrayList;
import java.util.List;

/**
 * A request to stop a piece of work, made at most once (by a timeout, or a client that went
 * away) and seen by the work in two ways: it {@linkplain #check checks} between steps, and it
 * {@linkplain #onCancel registers} what stops a step in flight (e.g. interrupting a DuckDB
 * statement). The first {@link #cancel} decides the reason; later calls change nothing. Safe for
 * concurrent use.
 */
public final class Cancel {
  private static final Cancel NEVER = new Cancel();

  private final List<Runnable> actions = new ArrayList<>();
  private SeException reason;

  /** A request never made: nothing checks or registered ever fires (the work runs to its end). */
  public static Cancel never() {
    return NEVER;
  }

  /** Makes the request with {@code why} and runs every registered action (once each). */
  public void cancel(SeException why) {
    if (this == NEVER) {
      throw new IllegalStateException("Cancel.never() cannot be cancelled");
    }
    List<Runnable> run;
    synchronized (this) {
      if (reason != null) {
        return;
      }
      reason = why;
      run = List.copyOf(actions);
      actions.clear();
    }
    run.forEach(Runnable::run);
  }

  /** The reason of the request, or null while none was made. */
  public synchronized SeException reason() {
    return reason;
  }

  /** Throws the request's reason when one was made. */
  public void check() {
    SeException why = reason();
    if (why != null) {
      throw why;
    }
  }

  /**
   * Runs {@code action} when the request is made (at once, on this thread, if it was already);
   * closing the returned registration forgets the action.
   */
  public Registration onCancel(Runnable action) {
    synchronized (this) {
      if (reason == null) {
        if (this != NEVER) {
          actions.add(action);
        }
        return () -> {
          synchronized (this) {
            actions.remove(action);
          }
        };
      }
    }
    action.run();
    return () -> { };
  }

  /** A registered action; {@link #close} forgets it. */
  public interface Registration extends AutoCloseable {
    @Override
    void close();
  }
}
