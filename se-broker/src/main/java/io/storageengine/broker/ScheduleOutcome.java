package io.storageengine.broker;

/** What scheduling a task key did. */
public enum ScheduleOutcome {
  /** No task had the key: a new pending task. */
  CREATED,
  /** A pending task (or a leased one already marked to rerun) had the key: nothing changed. */
  COALESCED,
  /** The task is leased: it runs once more after the current lease completes. */
  RERUN_AFTER_LEASE,
  /** The task had failed for good: it is pending again with a fresh attempt budget. */
  REVIVED
}
