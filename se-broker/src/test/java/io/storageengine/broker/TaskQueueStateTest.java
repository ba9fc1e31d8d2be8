package io.storageengine.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TaskQueueStateTest {
  private static final long LEASE = 1_000;
  private final TaskQueueState queue =
      new TaskQueueState(List.of(), new RetryPolicy(3, Duration.ofMillis(100), Duration.ofMillis(250)));

  @Test
  void schedulingAPendingKeyCoalesces() {
    assertThat(queue.schedule("reconcile/c/t1", "reconcile", Map.of("a", "1"), 0)).isEqualTo(ScheduleOutcome.CREATED);
    assertThat(queue.takeDirty()).isTrue();
    assertThat(queue.schedule("reconcile/c/t1", "reconcile", Map.of("a", "2"), 5)).isEqualTo(ScheduleOutcome.COALESCED);
    assertThat(queue.takeDirty()).isFalse();
    assertThat(queue.tasks()).singleElement().satisfies(t -> {
      assertThat(t.state()).isEqualTo(TaskState.PENDING);
      assertThat(t.payload()).containsEntry("a", "1");
    });
  }

  @Test
  void schedulingALeasedKeyRunsItOnceMoreAfterTheLease() {
    queue.schedule("k", "reconcile", Map.of(), 0);
    Task leased = queue.lease("w1", Set.of(), 10, LEASE, 0).get(0);
    assertThat(queue.schedule("k", "reconcile", Map.of(), 10)).isEqualTo(ScheduleOutcome.RERUN_AFTER_LEASE);
    assertThat(queue.schedule("k", "reconcile", Map.of(), 11)).isEqualTo(ScheduleOutcome.COALESCED);
    assertThat(queue.lease("w2", Set.of(), 10, LEASE, 20)).isEmpty();

    assertThat(queue.ack("k", leased.leaseId(), true, null, null, 30)).isEqualTo(AckOutcome.REQUEUED);
    Task again = queue.lease("w2", Set.of(), 10, LEASE, 31).get(0);
    assertThat(again.attempts()).isEqualTo(1);
    assertThat(queue.ack("k", again.leaseId(), true, null, null, 40)).isEqualTo(AckOutcome.DONE);
    assertThat(queue.tasks()).isEmpty();
  }

  @Test
  void schedulingWithAnotherKindIsRejected() {
    queue.schedule("k", "reconcile", Map.of(), 0);
    assertThatThrownBy(() -> queue.schedule("k", "maintain", Map.of(), 0))
        .isInstanceOf(SeException.class)
        .hasMessage("task key 'k' already has kind 'reconcile', not 'maintain'");
    assertThatThrownBy(() -> queue.schedule(" ", "maintain", Map.of(), 0))
        .hasMessage("task key must be 1 to 512 characters, got ' '");
  }

  @Test
  void leaseHonoursKindsMaxAndOrder() {
    queue.schedule("a", "reconcile", Map.of(), 0);
    queue.schedule("b", "maintain", Map.of(), 0);
    queue.schedule("c", "reconcile", Map.of(), 0);
    assertThat(queue.lease("w", Set.of("reconcile"), 1, LEASE, 0)).extracting(Task::key).containsExactly("a");
    assertThat(queue.lease("w", Set.of("reconcile"), 5, LEASE, 0)).extracting(Task::key).containsExactly("c");
    List<Task> rest = queue.lease("w", Set.of(), 5, LEASE, 0);
    assertThat(rest).extracting(Task::key).containsExactly("b");
    assertThat(rest.get(0).leaseOwner()).isEqualTo("w");
    assertThat(rest.get(0).leaseExpiresMs()).isEqualTo(LEASE);
  }

  @Test
  void tasksOfOneExclusiveGroupAreNeverLeasedAtOnce() {
    String uuid = "0c10957d-6e50-4745-84c9-986559a767ee";
    String other = "a26ce48d-9240-4d2a-8daa-ce569ffd36af";
    queue.schedule(TaskKeys.maintainKey("c", uuid), TaskKeys.MAINTAIN, TaskKeys.tablePayload("c", uuid), 0);
    queue.schedule(TaskKeys.reconcileKey("c", uuid), TaskKeys.RECONCILE, TaskKeys.tablePayload("c", uuid), 0);
    queue.schedule(TaskKeys.reconcileKey("c", other), TaskKeys.RECONCILE, TaskKeys.tablePayload("c", other), 0);

    // One lease call: the table's maintenance, not its reconcile; the other table's reconcile.
    List<Task> first = queue.lease("w1", Set.of(), 10, LEASE, 0);
    assertThat(first).extracting(Task::key)
        .containsExactly(TaskKeys.maintainKey("c", uuid), TaskKeys.reconcileKey("c", other));
    assertThat(first.get(0).exclusiveGroup()).isEqualTo("c/" + uuid);
    // Another worker: still held back while the maintenance is leased.
    assertThat(queue.lease("w2", Set.of(), 10, LEASE, 1)).isEmpty();

    queue.ack(first.get(0).key(), first.get(0).leaseId(), true, null, null, 2);
    assertThat(queue.lease("w2", Set.of(), 10, LEASE, 3)).extracting(Task::key)
        .containsExactly(TaskKeys.reconcileKey("c", uuid));
    // Tasks without a group are unaffected.
    queue.schedule("plain-1", "reconcile", Map.of(), 4);
    queue.schedule("plain-2", "maintain", Map.of(), 4);
    assertThat(queue.lease("w3", Set.of(), 10, LEASE, 5)).extracting(Task::key).containsExactly("plain-1", "plain-2");
  }

  @Test
  void slicesOfOneTableAreLeasedAtOnceButOneSliceNeverTwice() {
    String uuid = "0c10957d-6e50-4745-84c9-986559a767ee";
    for (int slice = 0; slice < 2; slice++) {
      queue.schedule(TaskKeys.reconcileSliceKey("c", uuid, slice), TaskKeys.RECONCILE_SLICE,
          TaskKeys.slicePayload("c", uuid, slice), 0);
    }
    List<Task> first = queue.lease("w1", Set.of(), 1, LEASE, 0);
    List<Task> second = queue.lease("w2", Set.of(), 1, LEASE, 0);
    assertThat(first).extracting(Task::key).containsExactly("reconcile-slice/c/" + uuid + "/0");
    assertThat(second).extracting(Task::key).containsExactly("reconcile-slice/c/" + uuid + "/1");
    assertThat(TaskKeys.sliceOf(second.get(0))).isEqualTo(1);
    assertThat(second.get(0).exclusiveGroup()).isEqualTo("c/" + uuid + "/slice/1");
    // Slice 0 scheduled again while leased: coalesced, and not leased to another worker meanwhile.
    queue.schedule(TaskKeys.reconcileSliceKey("c", uuid, 0), TaskKeys.RECONCILE_SLICE,
        TaskKeys.slicePayload("c", uuid, 0), 1);
    assertThat(queue.lease("w3", Set.of(), 10, LEASE, 2)).isEmpty();
  }

  @Test
  void heartbeatExtendsTheLeaseAndExpiryReturnsItToPending() {
    queue.schedule("k", "reconcile", Map.of(), 0);
    Task lease = queue.lease("w1", Set.of(), 1, LEASE, 0).get(0);
    assertThat(queue.heartbeat("k", lease.leaseId(), LEASE, 900)).isEqualTo(1_900);
    assertThat(queue.lease("w2", Set.of(), 1, LEASE, 1_500)).isEmpty();

    Task second = queue.lease("w2", Set.of(), 1, LEASE, 1_900).get(0);
    assertThat(second.leaseOwner()).isEqualTo("w2");
    assertThat(second.attempts()).isEqualTo(2);
    assertThat(second.lastError()).isEqualTo("lease of worker 'w1' expired");
    assertThatThrownBy(() -> queue.heartbeat("k", lease.leaseId(), LEASE, 2_000))
        .isInstanceOf(SeException.class)
        .hasMessage("lease '" + lease.leaseId() + "' of task 'k' is no longer held (expired or leased again)")
        .extracting(e -> ((SeException) e).code()).isEqualTo(ErrorCode.CONFLICT);
    assertThatThrownBy(() -> queue.ack("k", lease.leaseId(), true, null, null, 2_000))
        .hasMessageContaining("is no longer held");
  }

  @Test
  void failuresBackOffExponentiallyThenFailForGood() {
    queue.schedule("k", "reconcile", Map.of(), 0);
    Task a1 = queue.lease("w", Set.of(), 1, LEASE, 0).get(0);
    assertThat(queue.ack("k", a1.leaseId(), false, "catalog down", null, 10)).isEqualTo(AckOutcome.RETRY_SCHEDULED);
    assertThat(queue.tasks().get(0).notBeforeMs()).isEqualTo(110);
    assertThat(queue.lease("w", Set.of(), 1, LEASE, 109)).isEmpty();

    Task a2 = queue.lease("w", Set.of(), 1, LEASE, 110).get(0);
    assertThat(queue.ack("k", a2.leaseId(), false, "catalog down", null, 120)).isEqualTo(AckOutcome.RETRY_SCHEDULED);
    assertThat(queue.tasks().get(0).notBeforeMs()).isEqualTo(320);

    Task a3 = queue.lease("w", Set.of(), 1, LEASE, 320).get(0);
    assertThat(queue.ack("k", a3.leaseId(), false, "catalog down", null, 330)).isEqualTo(AckOutcome.FAILED);
    Task failed = queue.tasks().get(0);
    assertThat(failed.state()).isEqualTo(TaskState.FAILED);
    assertThat(failed.lastError()).isEqualTo("gave up after 3 attempts: catalog down");
    assertThat(queue.lease("w", Set.of(), 1, LEASE, 10_000)).isEmpty();

    // New work for the key revives it with a fresh attempt budget.
    assertThat(queue.schedule("k", "reconcile", Map.of(), 20_000)).isEqualTo(ScheduleOutcome.REVIVED);
    assertThat(queue.lease("w", Set.of(), 1, LEASE, 20_000).get(0).attempts()).isEqualTo(1);
  }

  @Test
  void anExplicitRetryTimeOverridesTheBackoff() {
    queue.schedule("k", "reconcile", Map.of(), 0);
    Task a1 = queue.lease("w", Set.of(), 1, LEASE, 0).get(0);
    queue.ack("k", a1.leaseId(), false, "busy", 5_000L, 10);
    assertThat(queue.tasks().get(0).notBeforeMs()).isEqualTo(5_010);
    assertThat(queue.tasks().get(0).lastError()).isEqualTo("busy");
  }

  @Test
  void expiredLeasesCountAsAttempts() {
    queue.schedule("k", "reconcile", Map.of(), 0);
    long now = 0;
    for (int i = 0; i < 3; i++) {
      assertThat(queue.lease("w" + i, Set.of(), 1, LEASE, now)).hasSize(1);
      now += LEASE;
    }
    queue.expireLeases(now);
    assertThat(queue.tasks().get(0).state()).isEqualTo(TaskState.FAILED);
    assertThat(queue.tasks().get(0).lastError()).isEqualTo("gave up after 3 attempts: lease of worker 'w2' expired");
  }

  @Test
  void ackOfAMissingTaskIsNotFound() {
    assertThatThrownBy(() -> queue.ack("nope", "l", true, null, null, 0))
        .isInstanceOf(SeException.class)
        .hasMessage("task 'nope' does not exist");
  }

  @Test
  void retryPolicyBackoffIsCapped() {
    RetryPolicy p = new RetryPolicy(10, Duration.ofSeconds(1), Duration.ofSeconds(5));
    assertThat(p.backoffMs(1)).isEqualTo(1_000);
    assertThat(p.backoffMs(3)).isEqualTo(4_000);
    assertThat(p.backoffMs(9)).isEqualTo(5_000);
    assertThatThrownBy(() -> new RetryPolicy(0, Duration.ZERO, Duration.ZERO))
        .hasMessage("maxAttempts must be >= 1, got 0");
  }
}
