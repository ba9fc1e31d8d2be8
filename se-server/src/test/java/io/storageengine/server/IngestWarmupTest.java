package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.ingest.IngestConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class IngestWarmupTest {
  @Test
  void landsEveryStreamAndLeavesNothingBehind() throws IOException {
    List<Path> before = warmupDirectories();
    assertThat(IngestWarmup.run(40, IngestConfig.defaults())).isEqualTo(40);
    assertThat(Thread.getAllStackTraces().keySet())
        .noneMatch(t -> t.isAlive() && t.getName().startsWith("se-warmup-"));
    // Its catalog (SQLite database and table files) lived in a temporary directory, now gone.
    assertThat(warmupDirectories()).containsExactlyInAnyOrderElementsOf(before);
  }

  @Test
  void aFailedWarmUpLeavesNoDirectoryBehind() throws IOException {
    List<Path> before = warmupDirectories();
    assertThat(IngestWarmup.run(3, IngestConfig.defaults().withMaxStreamBytes(16))).isEqualTo(-1);
    assertThat(warmupDirectories()).containsExactlyInAnyOrderElementsOf(before);
  }

  private static List<Path> warmupDirectories() throws IOException {
    try (Stream<Path> paths = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
      return paths.filter(p -> p.getFileName().toString().startsWith("se-warmup")).toList();
    }
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
