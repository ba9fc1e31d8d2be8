package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.ingest.IngestConfig;
import org.junit.jupiter.api.Test;

class IngestWarmupTest {
  @Test
  void landsEveryStreamAndLeavesNothingBehind() {
    assertThat(IngestWarmup.run(40, IngestConfig.defaults())).isEqualTo(40);
    assertThat(Thread.getAllStackTraces().keySet())
        .noneMatch(t -> t.isAlive() && t.getName().startsWith("se-warmup-"));
  }

  @Test
  void zeroStreamsIsNoWarmUp() {
    assertThat(IngestWarmup.run(0, IngestConfig.defaults())).isZero();
  }

  @Test
  void aFailedWarmUpIsReportedNotThrown() {
    // A stream limit below one batch: every stream is refused, the warm-up fails, nothing throws.
    assertThat(IngestWarmup.run(3, IngestConfig.defaults().withMaxStreamBytes(16))).isEqualTo(-1);
  }
}
