package io.storageengine.duckdb;

/** Lets the query engine's tests pause a {@link QueryDatabasePool}'s resets (its hook is package-private). */
public final class PoolResets {
  private PoolResets() {}

  /** Runs {@code hook} in every reset of {@code pool} from now on, before the database is reset. */
  public static void pauseWith(QueryDatabasePool pool, Runnable hook) {
    pool.beforeReset = hook;
  }
}
