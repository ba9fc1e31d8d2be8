package io.storageengine.kafka.connect;

import io.storageengine.server.ConfigKey;
import io.storageengine.server.EngineServer;
import io.storageengine.server.Role;
import io.storageengine.server.ServerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.connect.cli.ConnectStandalone;
import org.apache.kafka.connect.runtime.Connect;
import org.apache.kafka.connect.runtime.Herder;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorInfo;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.apache.kafka.connect.runtime.standalone.StandaloneHerder;
import org.apache.kafka.connect.util.ConnectorTaskId;
import org.apache.kafka.connect.util.FutureCallback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The real things the connector tests and the benchmark run against, all in this JVM: a one-node
 * KRaft Kafka cluster (broker and controller combined), a standalone Connect worker and an engine
 * server ({@code se dev}) with fast group commit and reconciliation.
 */
final class KafkaConnectHarness implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(KafkaConnectHarness.class);
  final KafkaClusterTestKit kafka;
  final Connect<StandaloneHerder> connect;
  final Path dir;
  EngineServer engine;
  private final Map<ConfigKey, String> engineOverrides;

  private KafkaConnectHarness(Path dir, KafkaClusterTestKit kafka, Connect<StandaloneHerder> connect,
      EngineServer engine, Map<ConfigKey, String> engineOverrides) {
    this.dir = dir;
    this.kafka = kafka;
    this.connect = connect;
    this.engine = engine;
    this.engineOverrides = engineOverrides;
  }

  static KafkaConnectHarness start(Path dir, Map<ConfigKey, String> engineOverrides) throws Exception {
    LOG.info("starting the engine");
    EngineServer engine = startEngine(dir.resolve("engine"), 0, engineOverrides);
    LOG.info("starting Kafka");
    KafkaClusterTestKit kafka = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder()
        .setCombined(true).setNumBrokerNodes(1).setNumControllerNodes(1)
        .setBaseDirectory(Files.createDirectories(dir.resolve("kafka"))).build())
        .setConfigProp("offsets.topic.replication.factor", "1")
        .setConfigProp("offsets.topic.num.partitions", "1")
        .setConfigProp("group.initial.rebalance.delay.ms", "0")
        .setConfigProp("transaction.state.log.replication.factor", "1")
        .setConfigProp("transaction.state.log.min.isr", "1")
        .build();
    kafka.format();
    kafka.startup();
    kafka.waitForReadyBrokers();
    LOG.info("starting Connect");
    Map<String, String> worker = new HashMap<>();
    worker.put("bootstrap.servers", kafka.bootstrapServers());
    worker.put("key.converter", "org.apache.kafka.connect.json.JsonConverter");
    worker.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
    worker.put("key.converter.schemas.enable", "false");
    worker.put("value.converter.schemas.enable", "false");
    worker.put("offset.storage.file.filename", dir.resolve("connect.offsets").toString());
    worker.put("offset.flush.interval.ms", "300");
    worker.put("listeners", "http://127.0.0.1:0");
    // ServiceLoader manifests only: no reflective scan of the test classpath.
    worker.put("plugin.discovery", "service_load");
    worker.put("consumer.max.poll.records", "5000");
    Connect<StandaloneHerder> connect = new ConnectStandalone().startConnect(worker);
    LOG.info("Connect started");
    return new KafkaConnectHarness(dir, kafka, connect, engine, engineOverrides);
  }

  private static EngineServer startEngine(Path data, int port, Map<ConfigKey, String> overrides) {
    ServerConfig config = ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:" + port)
        .with(ConfigKey.DATA_DIR, data.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "50ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "200ms");
    for (Map.Entry<ConfigKey, String> e : overrides.entrySet()) {
      config = config.with(e.getKey(), e.getValue());
    }
    return EngineServer.start(config, Role.DEV);
  }

  /** Stops the engine and starts it again on the same port and data directory. */
  void restartEngine() {
    int port = engine.port();
    engine.close();
    engine = startEngine(dir.resolve("engine"), port, engineOverrides);
  }

  String engineUri() {
    return "grpc://127.0.0.1:" + engine.port();
  }

  void createTopic(String topic, int partitions) throws Exception {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()))) {
      admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
    }
  }

  KafkaProducer<String, String> producer() {
    Properties properties = new Properties();
    properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    properties.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    properties.put(ProducerConfig.BATCH_SIZE_CONFIG, "262144");
    return new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer());
  }

  /** Connector settings for the engine and {@code topics}; callers add the se.* table keys. */
  Map<String, String> connectorConfig(String name, String topics) {
    Map<String, String> config = new HashMap<>();
    config.put("name", name);
    config.put("connector.class", EngineSinkConnector.class.getName());
    config.put("tasks.max", "1");
    config.put("topics", topics);
    config.put(EngineSinkConfig.ENGINE_URI, engineUri());
    config.put(EngineSinkConfig.CATALOG, "warehouse");
    return config;
  }

  /** Creates the connector and waits until its task runs. */
  void putConnector(Map<String, String> config) throws Exception {
    createConnector(config);
    await(Duration.ofSeconds(30), () -> taskState(config.get("name")).equals("RUNNING"), "task of " + config.get("name") + " running");
  }

  /** Creates the connector without waiting for its task. */
  void createConnector(Map<String, String> config) throws Exception {
    FutureCallback<Herder.Created<ConnectorInfo>> done = new FutureCallback<>();
    connect.herder().putConnectorConfig(config.get("name"), config, true, done);
    done.get(30, TimeUnit.SECONDS);
  }

  void deleteConnector(String name) throws Exception {
    FutureCallback<Herder.Created<ConnectorInfo>> done = new FutureCallback<>();
    connect.herder().deleteConnectorConfig(name, done);
    done.get(30, TimeUnit.SECONDS);
  }

  /** Stops task 0 of the connector and starts it again (a new task instance, from committed offsets). */
  void restartTask(String name) throws Exception {
    FutureCallback<Void> done = new FutureCallback<>();
    connect.herder().restartTask(new ConnectorTaskId(name, 0), done);
    done.get(30, TimeUnit.SECONDS);
  }

  /**
   * Replaces the connector's config (e.g. another {@code tasks.max}) and waits until
   * {@code tasks} tasks run and the connector's consumer group is stable with {@code tasks}
   * members that each hold some of the topics' {@code partitions}: the partitions moved
   * between tasks. Needs {@code tasks <= partitions}.
   */
  void reconfigure(Map<String, String> config, int tasks, int partitions) throws Exception {
    String name = config.get("name");
    createConnector(config);
    await(Duration.ofSeconds(60), () -> runningTasks(name) == tasks, tasks + " tasks of " + name + " running");
    await(Duration.ofSeconds(60), Duration.ofMillis(200), () -> {
      Map<String, Set<TopicPartition>> members = assignment(name);
      return members.size() == tasks && members.values().stream().noneMatch(Set::isEmpty)
          && members.values().stream().mapToInt(Set::size).sum() == partitions;
    }, "the " + partitions + " partitions of " + name + " shared by " + tasks + " consumers of a stable group");
  }

  int runningTasks(String name) {
    return (int) connect.herder().connectorStatus(name).tasks().stream()
        .filter(t -> t.state().equals("RUNNING")).count();
  }

  /**
   * The partitions each member of the connector's consumer group ({@code connect-<name>})
   * holds; empty while the group rebalances.
   */
  Map<String, Set<TopicPartition>> assignment(String name) {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()))) {
      ConsumerGroupDescription group = admin.describeConsumerGroups(List.of("connect-" + name))
          .describedGroups().get("connect-" + name).get(30, TimeUnit.SECONDS);
      Map<String, Set<TopicPartition>> members = new HashMap<>();
      if (group.groupState() != GroupState.STABLE) {
        return members; // a rebalance in progress: no assignment yet
      }
      for (MemberDescription member : group.members()) {
        members.put(member.consumerId(), member.assignment().topicPartitions());
      }
      return members;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("describing consumer group connect-" + name, e);
    }
  }

  String taskState(String name) {
    ConnectorStateInfo status = connect.herder().connectorStatus(name);
    return status.tasks().isEmpty() ? "NONE" : status.tasks().get(0).state();
  }

  String taskTrace(String name) {
    ConnectorStateInfo status = connect.herder().connectorStatus(name);
    return status.tasks().isEmpty() ? "" : String.valueOf(status.tasks().get(0).trace());
  }

  static void await(Duration timeout, BooleanSupplier condition, String what) throws InterruptedException {
    await(timeout, Duration.ofMillis(100), condition, what);
  }

  /** Polls {@code condition} every {@code interval} (a check that reads a table costs CPU the engine needs). */
  static void await(Duration timeout, Duration interval, BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + timeout + " waiting for " + what);
      }
      Thread.sleep(interval.toMillis());
    }
  }

  @Override
  public void close() throws Exception {
    LOG.info("stopping");
    try {
      connect.stop();
      connect.awaitStop();
    } finally {
      try {
        kafka.close();
      } finally {
        engine.close();
      }
    }
  }
}
