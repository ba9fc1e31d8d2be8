package io.storageengine.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A burst begins at the threshold of streams in admission at once, outlasts short gaps, and ends
 * once no stream has been in admission for the linger; a few streams never make one.
 */
class AdmissionTrackerTest {
  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final AdmissionTracker tracker = new AdmissionTracker(3, Duration.ofMillis(250), now::get);

  @Test
  void fewStreamsAtOnceAreNoBurst() {
    for (int i = 0; i < 100; i++) {
      tracker.opened();
      tracker.opened();
      assertThat(tracker.high()).isFalse();
      tracker.admitted();
      tracker.admitted();
      now.addAndGet(Duration.ofMillis(1).toNanos());
    }
    assertThat(tracker.admitting()).isZero();
  }

  @Test
  void burstBeginsAtThresholdOutlastsGapsAndEndsAfterLinger() {
    tracker.opened();
    tracker.opened();
    assertThat(tracker.high()).isFalse();
    tracker.opened();
    assertThat(tracker.high()).isTrue();
    for (int i = 0; i < 3; i++) {
      tracker.admitted();
    }
    // No stream in admission, but the burst lasts the linger: the next streams come soon.
    now.addAndGet(Duration.ofMillis(200).toNanos());
    assertThat(tracker.high()).isTrue();
    tracker.opened(); // one stream, below the threshold, continues the burst
    now.addAndGet(Duration.ofSeconds(5).toNanos());
    assertThat(tracker.high()).as("a stream is still in admission").isTrue();
    tracker.admitted();
    now.addAndGet(Duration.ofMillis(249).toNanos());
    assertThat(tracker.high()).isTrue();
    now.addAndGet(Duration.ofMillis(1).toNanos());
    assertThat(tracker.high()).isFalse();
    // Over: a single stream does not begin a new one.
    tracker.opened();
    assertThat(tracker.high()).isFalse();
    tracker.admitted();
  }

  @Test
  void leavingAdmissionMoreOftenThanEnteringIsABug() {
    tracker.opened();
    tracker.admitted();
    assertThatThrownBy(tracker::admitted).isInstanceOf(IllegalStateException.class)
        .hasMessage("a stream left admission that never entered it");
    assertThatThrownBy(() -> new AdmissionTracker(0, Duration.ZERO, now::get))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("admission burst threshold must be at least 1, got 0");
  }
}
