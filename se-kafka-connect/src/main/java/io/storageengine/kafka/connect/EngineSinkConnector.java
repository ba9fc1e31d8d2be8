package io.storageengine.kafka.connect;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.sink.SinkConnector;

/**
 * Kafka Connect sink writing topics to Storage Engine tables through the native ingestion
 * protocol. Every task gets the connector's settings ({@link EngineSinkConfig}); Connect assigns
 * the partitions.
 */
public final class EngineSinkConnector extends SinkConnector {
  static final String VERSION = versionOf();

  private Map<String, String> properties;

  @Override
  public void start(Map<String, String> properties) {
    new EngineSinkConfig(properties); // refuse a bad config before any task starts
    this.properties = Map.copyOf(properties);
  }

  @Override
  public Class<? extends Task> taskClass() {
    return EngineSinkTask.class;
  }

  @Override
  public List<Map<String, String>> taskConfigs(int maxTasks) {
    List<Map<String, String>> configs = new ArrayList<>(maxTasks);
    for (int i = 0; i < maxTasks; i++) {
      configs.add(properties);
    }
    return configs;
  }

  @Override
  public void stop() {
  }

  @Override
  public ConfigDef config() {
    return EngineSinkConfig.DEFINITION;
  }

  @Override
  public String version() {
    return VERSION;
  }

  private static String versionOf() {
    String version = EngineSinkConnector.class.getPackage().getImplementationVersion();
    return version == null ? "0.1.0-SNAPSHOT" : version;
  }
}
