package io.storageengine.stress.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The pieces of the slice benchmarks that run without a cluster or Spark. */
class SliceBenchHelpersTest {
  private static final Schema ENTITY = new Schema(List.of(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.required(2, "ts", Types.TimestampType.withoutZone()),
      Types.NestedField.optional(3, "v", Types.IntegerType.get()),
      Types.NestedField.optional(4, "s", Types.StringType.get())), Set.of(1));

  @Test
  void entityRowsHaveTheValuesTheSparkAnchorWritesToo() {
    try (BufferAllocator allocator = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(IcebergArrowSchemas.toArrow(ENTITY), allocator)) {
      EntityRows.fill(root, 10, 3, k -> k * 1000 + 1, 2);
      assertThat(root.getRowCount()).isEqualTo(3);
      assertThat(root.getVector("id").getObject(1)).isEqualTo(11_001L);
      // 1_700_000_000 s + version 2 s + (11001 % 1000) us, as MergeAnchor's timestamp_micros(...)
      assertThat(root.getVector("ts").getObject(1)).isEqualTo(LocalDateTime.of(2023, 11, 14, 22, 13, 22, 1_000));
      assertThat(root.getVector("v").getObject(1)).isEqualTo((int) (11_001L * 31 % 100_000));
      assertThat(root.getVector("s").getObject(1).toString()).isEqualTo("s1001");
    }
  }

  @Test
  void theSparkAnchorRunSaysHowToBuildItWhenItIsNotBuilt(@TempDir Path dir) throws Exception {
    Files.createDirectories(dir.resolve("target"));
    MergeAnchorRun run = new MergeAnchorRun(dir, "1g", 1);
    assertThatThrownBy(() -> run.run(10, 2, 1, 0))
        .isInstanceOf(SeException.class)
        .hasMessageContaining("mvn -q -B -pl se-spark process-classes")
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.NOT_FOUND));
  }

  @Test
  void cpuTicksOfThisProcessGrowWhileItWorks() {
    long pid = ProcessHandle.current().pid();
    long before = SliceScalingBenchmark.cpuTicks(pid);
    long deadline = System.nanoTime() + 300_000_000L;
    long x = 0;
    while (System.nanoTime() < deadline) {
      x += Long.numberOfTrailingZeros(x + System.nanoTime());
    }
    assertThat(x).isPositive();
    assertThat(SliceScalingBenchmark.cpuTicks(pid)).isGreaterThan(before);
  }
}
