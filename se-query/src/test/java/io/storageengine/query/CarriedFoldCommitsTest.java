package io.storageengine.query;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.reconcile.maintenance.MaintenancePolicy;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * How far behind the table's current snapshot a kept fold's snapshot may be and still be read
 * with it ({@link EntityTailFolds#carriedCommits}): a number of commits a slice, bounded by the
 * snapshots maintenance keeps by count only when its retention could expire the fold's snapshot.
 */
class CarriedFoldCommitsTest {
  private static MaintenancePolicy policy(Duration retention, int minSnapshots) {
    MaintenancePolicy d = MaintenancePolicy.defaults();
    return new MaintenancePolicy(d.enabled(), d.targetFileSizeBytes(), d.minInputFiles(), d.deleteRatio(), retention,
        minSnapshots, d.orphanAge(), d.walGcAge(), d.maxManifests());
  }

  @Test
  void aSlicedTableMayBeAsManyCommitsAheadAsItHasSlicesTimesTheUnslicedBound() {
    MaintenancePolicy defaults = MaintenancePolicy.defaults();
    assertThat(defaults.snapshotRetention()).isGreaterThan(Duration.ofMillis(2 * EntityTailFolds.MAX_CARRIED_MILLIS));
    assertThat(EntityTailFolds.carriedCommits(defaults, 0)).isEqualTo(EntityTailFolds.MAX_CARRIED_COMMITS);
    assertThat(EntityTailFolds.carriedCommits(defaults, 1)).isEqualTo(EntityTailFolds.MAX_CARRIED_COMMITS);
    assertThat(EntityTailFolds.carriedCommits(defaults, 4)).isEqualTo(4 * EntityTailFolds.MAX_CARRIED_COMMITS);
    assertThat(EntityTailFolds.carriedCommits(policy(Duration.ofHours(1), 3), 4))
        .as("a long retention keeps the fold's snapshot whatever the count").isEqualTo(32);
  }

  @Test
  void aShortRetentionLeavesTheSnapshotsKeptByCountAsTheBound() {
    MaintenancePolicy shortRetention = policy(Duration.ofSeconds(30), 10);
    assertThat(EntityTailFolds.carriedCommits(shortRetention, 0)).isEqualTo(Math.min(8, 9));
    assertThat(EntityTailFolds.carriedCommits(shortRetention, 4)).isEqualTo(9);
    assertThat(EntityTailFolds.carriedCommits(policy(Duration.ofSeconds(30), 3), 4)).isEqualTo(2);
  }
}
