/**
 * Kafka Connect sink connector: {@link io.storageengine.kafka.connect.EngineSinkConnector} writes
 * topics to engine tables (append or entity, as the table says) through the native ingestion
 * protocol, commits to Kafka only offsets the engine acknowledged, and sends records the table
 * cannot take to Connect's dead-letter queue. {@link io.storageengine.kafka.connect.PartitionWriter}
 * holds the batching and the producer id / sequence decisions for idempotent ingestion.
 */
package io.storageengine.kafka.connect;
