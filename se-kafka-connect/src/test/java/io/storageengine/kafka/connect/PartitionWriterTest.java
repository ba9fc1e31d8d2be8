package io.storageengine.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;

import io.storageengine.wal.ProducerStamp;
import io.storageengine.wal.WalOperation;
import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The producer ids of a partition's streams: stable, valid, one per (operation, column set). */
class PartitionWriterTest {
  @Test
  void producerIdNamesConnectorTopicPartitionOperationAndColumnSet() {
    String id = PartitionWriter.producerIdOf("orders-sink", new TopicPartition("orders.v1", 3), WalOperation.UPSERT,
        List.of("id", "qty"));
    assertThat(id).matches("kafka/orders-sink/orders\\.v1/3/upsert/[0-9a-f]{16}");
    assertThat(ProducerStamp.checkProducerId(id, "id")).isEqualTo(id);
    assertThat(PartitionWriter.producerIdOf("orders-sink", new TopicPartition("orders.v1", 3), WalOperation.UPSERT,
        List.of("id", "qty"))).as("the same in every JVM and run").isEqualTo(id);
    assertThat(PartitionWriter.producerIdOf("orders-sink", new TopicPartition("orders.v1", 3), WalOperation.UPSERT,
        List.of("qty", "id"))).isNotEqualTo(id);
    assertThat(PartitionWriter.producerIdOf("orders-sink", new TopicPartition("orders.v1", 3), WalOperation.DELETE,
        List.of("id", "qty"))).isNotEqualTo(id);
    assertThat(PartitionWriter.producerIdOf("orders-sink", new TopicPartition("orders.v1", 4), WalOperation.UPSERT,
        List.of("id", "qty"))).isNotEqualTo(id);
  }

  @Test
  void aConnectorNameAProducerIdCannotHoldOrALongIdIsHashed() {
    TopicPartition partition = new TopicPartition("t", 0);
    String spaced = PartitionWriter.producerIdOf("my sink/eu", partition, WalOperation.UPSERT, List.of("id"));
    assertThat(spaced).matches("kafka/h[0-9a-f]{32}/0/upsert/[0-9a-f]{16}");
    assertThat(ProducerStamp.checkProducerId(spaced, "id")).isEqualTo(spaced);
    assertThat(PartitionWriter.producerIdOf("my sink/us", partition, WalOperation.UPSERT, List.of("id")))
        .isNotEqualTo(spaced);
    String longTopic = "t".repeat(200);
    String hashed = PartitionWriter.producerIdOf("sink", new TopicPartition(longTopic, 0), WalOperation.UPSERT,
        List.of("id"));
    assertThat(hashed).hasSizeLessThanOrEqualTo(ProducerStamp.MAX_PRODUCER_ID_LENGTH).startsWith("kafka/h");
    assertThat(ProducerStamp.checkProducerId(hashed, "id")).isEqualTo(hashed);
  }
}
