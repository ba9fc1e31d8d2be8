package io.storageengine.broker;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The task queue's rules, in memory and free of I/O and threads (the {@link Broker} adds both).
 * Every operation takes the current time and first returns expired leases to pending. Tasks
 * are kept in scheduling order, which is also the order they are leased in. Not thread-safe.
 */
public final class TaskQueueState {
  private static final int MAX_KEY_LENGTH = 512;
  private static final int MAX_ERROR_LENGTH = 1024;

  private final LinkedHashMap<String, Task> tasks = new LinkedHashMap<>();
  private final RetryPolicy retry;
  private boolean dirty;

  public TaskQueueState(List<Task> initial, RetryPolicy retry) {
    this.retry = retry;
    for (Task t : initial) {
      tasks.put(t.key(), t);
    }
  }

  /** Every task in scheduling order. */
  public List<Task> tasks() {
    return List.copyOf(tasks.values());
  }

  /** True (once) when something changed since the last call: the queue object needs a write. */
  public boolean takeDirty() {
    boolean d = dirty;
    dirty = false;
    return d;
  }

  /** Marks the state changed again, after a write of it did not land. */
  public void markDirty() {
    dirty = true;
  }

  /**
   * Schedules {@code key}. Keys are unique: a pending key coalesces, a leased key runs once more
   * after its lease completes, a failed key is revived with a fresh attempt budget (new work
   * arrived for it). The payload of an existing task is kept.
   */
  public ScheduleOutcome schedule(String key, String kind, Map<String, String> payload, long nowMs) {
    requireText("task key", key, MAX_KEY_LENGTH);
    requireText("task kind", kind, 64);
    expireLeases(nowMs);
    Task t = tasks.get(key);
    if (t == null) {
      put(new Task(key, kind, payload, TaskState.PENDING, 0, null, null, null, nowMs, null, false));
      return ScheduleOutcome.CREATED;
    }
    if (!t.kind().equals(kind)) {
      throw SeException.invalid("task key '%s' already has kind '%s', not '%s'", key, t.kind(), kind);
    }
    switch (t.state()) {
      case PENDING:
        return ScheduleOutcome.COALESCED;
      case LEASED:
        if (t.rerun()) {
          return ScheduleOutcome.COALESCED;
        }
        put(new Task(key, t.kind(), t.payload(), t.state(), t.attempts(), t.leaseId(), t.leaseOwner(),
            t.leaseExpiresMs(), t.notBeforeMs(), t.lastError(), true));
        return ScheduleOutcome.RERUN_AFTER_LEASE;
      default:
        put(pending(t, 0, nowMs, t.lastError()));
        return ScheduleOutcome.REVIVED;
    }
  }

  /**
   * Leases up to {@code max} pending tasks whose kind is in {@code kinds} (any kind when empty)
   * and whose backoff has passed, to {@code owner} for {@code leaseMs}. Each lease counts as an
   * attempt. A task naming an {@linkplain Task#EXCLUSIVE_GROUP exclusive group} is not leased
   * while another task of that group is.
   */
  public List<Task> lease(String owner, Set<String> kinds, int max, long leaseMs, long nowMs) {
    requireText("worker id", owner, 256);
    if (max < 1) {
      throw SeException.invalid("max tasks to lease must be >= 1, got %d", max);
    }
    expireLeases(nowMs);
    Set<String> busyGroups = new java.util.HashSet<>();
    for (Task t : tasks.values()) {
      if (t.state() == TaskState.LEASED && t.exclusiveGroup() != null) {
        busyGroups.add(t.exclusiveGroup());
      }
    }
    List<Task> granted = new ArrayList<>();
    for (Task t : List.copyOf(tasks.values())) {
      if (granted.size() == max) {
        break;
      }
      if (t.state() == TaskState.PENDING && t.notBeforeMs() <= nowMs
          && (kinds.isEmpty() || kinds.contains(t.kind()))
          && (t.exclusiveGroup() == null || busyGroups.add(t.exclusiveGroup()))) {
        Task leased = new Task(t.key(), t.kind(), t.payload(), TaskState.LEASED, t.attempts() + 1,
            UUID.randomUUID().toString(), owner, nowMs + leaseMs, t.notBeforeMs(), t.lastError(), false);
        put(leased);
        granted.add(leased);
      }
    }
    return granted;
  }

  /** Extends a held lease to {@code now + leaseMs}; returns the new expiry. */
  public long heartbeat(String key, String leaseId, long leaseMs, long nowMs) {
    expireLeases(nowMs);
    Task t = held(key, leaseId);
    long expires = nowMs + leaseMs;
    put(new Task(t.key(), t.kind(), t.payload(), t.state(), t.attempts(), t.leaseId(), t.leaseOwner(),
        expires, t.notBeforeMs(), t.lastError(), t.rerun()));
    return expires;
  }

  /**
   * Ends a held lease. Success removes the task (or requeues it when it was scheduled again
   * meanwhile). Failure retries after {@code retryAfterMs} when given, else after the policy's
   * backoff, until the attempts are used up; then the task is failed with {@code error}.
   */
  public AckOutcome ack(String key, String leaseId, boolean success, String error, Long retryAfterMs,
      long nowMs) {
    expireLeases(nowMs);
    Task t = held(key, leaseId);
    if (success) {
      if (t.rerun()) {
        put(pending(t, 0, nowMs, null));
        return AckOutcome.REQUEUED;
      }
      tasks.remove(key);
      dirty = true;
      return AckOutcome.DONE;
    }
    if (retryAfterMs != null && retryAfterMs < 0) {
      throw SeException.invalid("retry_after_ms must be >= 0, got %d", retryAfterMs);
    }
    String reason = truncate(error == null || error.isBlank() ? "failed without a reason" : error);
    if (t.attempts() >= retry.maxAttempts()) {
      put(failed(t, "gave up after " + t.attempts() + " attempts: " + reason));
      return AckOutcome.FAILED;
    }
    long delay = retryAfterMs != null ? retryAfterMs : retry.backoffMs(t.attempts());
    put(pending(t, t.attempts(), nowMs + delay, reason));
    return AckOutcome.RETRY_SCHEDULED;
  }

  /** Returns tasks whose lease ended to pending (or failed, when out of attempts). */
  public int expireLeases(long nowMs) {
    int expired = 0;
    for (Task t : List.copyOf(tasks.values())) {
      if (t.state() == TaskState.LEASED && t.leaseExpiresMs() <= nowMs) {
        String reason = "lease of worker '" + t.leaseOwner() + "' expired";
        if (t.attempts() >= retry.maxAttempts()) {
          put(failed(t, "gave up after " + t.attempts() + " attempts: " + reason));
        } else {
          // An expired lease is a crashed or stuck worker: rerun at once elsewhere.
          put(pending(t, t.attempts(), nowMs, reason));
        }
        expired++;
      }
    }
    return expired;
  }

  private Task held(String key, String leaseId) {
    Task t = tasks.get(key);
    if (t == null) {
      throw SeException.notFound("task '%s' does not exist", key);
    }
    if (t.state() != TaskState.LEASED || !t.leaseId().equals(leaseId)) {
      throw new SeException(ErrorCode.CONFLICT,
          String.format("lease '%s' of task '%s' is no longer held (expired or leased again)", leaseId, key));
    }
    return t;
  }

  private void put(Task t) {
    tasks.put(t.key(), t);
    dirty = true;
  }

  private static Task pending(Task t, int attempts, long notBeforeMs, String lastError) {
    return new Task(t.key(), t.kind(), t.payload(), TaskState.PENDING, attempts, null, null, null,
        notBeforeMs, lastError, false);
  }

  private static Task failed(Task t, String reason) {
    return new Task(t.key(), t.kind(), t.payload(), TaskState.FAILED, t.attempts(), null, null, null,
        t.notBeforeMs(), truncate(reason), false);
  }

  private static String truncate(String s) {
    return s.length() <= MAX_ERROR_LENGTH ? s : s.substring(0, MAX_ERROR_LENGTH) + "...";
  }

  private static void requireText(String what, String value, int maxLength) {
    if (value == null || value.isBlank() || value.length() > maxLength) {
      throw SeException.invalid("%s must be 1 to %d characters, got '%s'", what, maxLength, value);
    }
  }
}
