package io.storageengine.broker;

/** What acknowledging a lease did to its task. */
public enum AckOutcome {
  /** Succeeded: the task is gone from the queue. */
  DONE,
  /** Succeeded, but it was scheduled again meanwhile: pending again. */
  REQUEUED,
  /** Failed: pending again after a backoff. */
  RETRY_SCHEDULED,
  /** Failed and out of attempts: state failed with the reason. */
  FAILED
}
