package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The DuckDB threads {@link QueryAdmission} gives each query from {@link QueryLimits#cpuThreads}. */
class QueryAdmissionThreadsTest {
  @Test
  void aQueryGetsItsThreadsWhileTheBudgetHasThemAndOneOtherwise() {
    QueryAdmission admission = new QueryAdmission(QueryLimits.defaults().withCpuThreads(3)
        .withTenantConcurrency(4, 0).withTotalMemory(1L << 40), 1, 2);
    QueryAdmission.Permit first = admission.admit("a");
    QueryAdmission.Permit second = admission.admit("b");
    QueryAdmission.Permit third = admission.admit("b");
    assertThat(first.threads()).isEqualTo(2);
    assertThat(second.threads()).as("one free").isEqualTo(1);
    assertThat(third.threads()).as("none free: still runs, on one").isEqualTo(1);
    assertThat(admission.threadsInUse()).isEqualTo(4);
    first.close();
    first.close();
    assertThat(admission.threadsInUse()).isEqualTo(2);
    try (QueryAdmission.Permit next = admission.admit("a")) {
      assertThat(next.threads()).isEqualTo(1);
    }
    second.close();
    third.close();
    assertThat(admission.threadsInUse()).isZero();
    try (QueryAdmission.Permit alone = admission.admit("a")) {
      assertThat(alone.threads()).isEqualTo(2);
    }
  }

  @Test
  void theDefaultBudgetKeepsACoreForTheNextQuery() {
    assertThat(QueryLimits.defaults().cpuThreads())
        .isEqualTo(Math.max(1, Runtime.getRuntime().availableProcessors()));
  }
}
