package io.storageengine.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.storageengine.catalog.IcebergArrowSchemas;
import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.Tables;
import io.storageengine.ingest.IngestProtocol;
import io.storageengine.wal.ObjectStoreWal;
import io.storageengine.wal.TableWal;
import io.storageengine.wal.WalFrame;
import io.storageengine.wal.WalOperation;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile DoPut input against a real server over a real gRPC connection: the reported cases
 * (a lying utf8 offset, a lying row count, messages that used to fail as INTERNAL/UNKNOWN or
 * not at all), a corrupt WAL frame at reconcile, and a fuzz of mutated messages. Every case is
 * INVALID_ARGUMENT naming the problem, or is stored and then published; the process survives
 * and its peak memory stays bounded.
 */
class IngestInputSafetyTest {
  private static final long MEMORY_BOUND = 3_500L << 20;

  @TempDir static Path dir;
  private static EngineServer server;
  private static BufferAllocator allocator;
  private static ManagedChannel channel;
  private static Catalog catalog;

  @BeforeAll
  static void start() {
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString())
        .with(ConfigKey.INGEST_FLUSH_INTERVAL, "20ms")
        .with(ConfigKey.RECONCILE_INTERVAL, "200ms"), Role.DEV);
    allocator = new RootAllocator();
    channel = ManagedChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
    catalog = server.registry().catalog("warehouse");
  }

  @AfterAll
  static void stop() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.close();
    allocator.close();
  }

  // ---- the reported cases ------------------------------------------------------------------

  @Test
  void negativeUtf8OffsetIsRejectedNamingTheColumnAndTheServerKeepsServing() throws Exception {
    Table table = create("safety.strings_a", "id bigint not null, name string");
    List<RawDoPut.IpcMessage> ipc = ipc(table, root -> fillStrings(root, 3), null);
    RawDoPut.IpcMessage batch = ipc.get(ipc.size() - 1);
    // Buffers: id validity, id data, name validity, name offsets, name data.
    long offsets = buffer(batch, 3).offset();
    putInt(batch.body(), (int) offsets + 4, -100);

    RawDoPut.Outcome outcome = send(table, ipc);
    assertThat(outcome.status().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(outcome.status().getDescription())
        .contains("batch request_id 1").contains("column `name`").contains("offset 1 (-100)");

    // Nothing was written, and the next good batch is stored and published.
    RawDoPut.Outcome good = send(table, ipc(table, root -> fillStrings(root, 3), null));
    assertThat(good.status().getCode()).isEqualTo(Status.Code.OK);
    awaitRecords(table, 3);
  }

  @Test
  void rowCountBeyondTheBuffersIsRejectedBeforeAnythingIsAllocated() throws Exception {
    Table table = create("safety.ints_b", "id bigint not null, name string");
    List<RawDoPut.IpcMessage> ipc = ipc(table, root -> fillStrings(root, 2), null);
    RawDoPut.IpcMessage batch = ipc.get(ipc.size() - 1);
    RecordBatch header = recordBatch(batch);
    putLong(batch.header(), RawDoPut.position(header, 4), Integer.MAX_VALUE);
    for (int i = 0; i < header.nodesLength(); i++) {
      putLong(batch.header(), RawDoPut.position(header.nodes(new FieldNode(), i)), Integer.MAX_VALUE);
    }
    RawDoPut.Outcome outcome = send(table, ipc);
    assertThat(outcome.status().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(outcome.status().getDescription())
        .isEqualTo("DoPut message 3: record batch claims 2147483647 rows, more than a batch may hold (268435456)");

    // Within the row limit, the buffers still bound what a header may claim.
    for (int i = 0; i < header.nodesLength(); i++) {
      putLong(batch.header(), RawDoPut.position(header.nodes(new FieldNode(), i)), 1_000_000);
    }
    putLong(batch.header(), RawDoPut.position(header, 4), 1_000_000);
    outcome = send(table, ipc);
    assertThat(outcome.status().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(outcome.status().getDescription()).isEqualTo("DoPut message 3: record batch, column `id`: "
        + "validity buffer of 1 bytes for 1000000 values");
    assertThat(peakResidentBytes()).isLessThan(MEMORY_BOUND);
  }

  @Test
  void clientMistakesAreInvalidArgumentNamingWhatWasWrong() throws Exception {
    Table table = create("safety.mistakes_c", "id bigint not null, name string");
    List<RawDoPut.IpcMessage> ipc = ipc(table, root -> fillStrings(root, 2), null);

    // A batch of another schema mid-stream: a second schema message, then its batch.
    Table other = create("safety.other_c", "x int");
    List<RawDoPut.IpcMessage> otherIpc = ipc(other, root -> {
      ((IntVector) root.getVector(0)).setSafe(0, 7);
      root.setRowCount(1);
    }, null);
    List<byte[]> mixed = new ArrayList<>(frame(table, ipc));
    mixed.add(RawDoPut.flightData(null, otherIpc.get(0).header(), null, null));
    expectInvalid(mixed, "a second schema message");
    List<byte[]> otherBatch = new ArrayList<>(frame(table, ipc).subList(0, 2));
    RawDoPut.IpcMessage foreign = otherIpc.get(otherIpc.size() - 1);
    otherBatch.add(RawDoPut.flightData(null, foreign.header(), IngestProtocol.encodeRequestId(1), foreign.body()));
    expectInvalid(otherBatch, "has 1 field nodes and 2 buffers, the stream's schema needs 2 and 5");

    // A buffer claiming 2 GiB of a 16-byte body.
    List<RawDoPut.IpcMessage> big = ipc(table, root -> fillStrings(root, 2), null);
    RawDoPut.IpcMessage batch = big.get(big.size() - 1);
    putLong(batch.header(), RawDoPut.position(buffer(batch, 1)) + 8, 1L << 31);
    expectInvalid(frame(table, big), "column `id`: data buffer at offset");

    // Garbage where the IPC header should be.
    List<byte[]> garbage = new ArrayList<>(frame(table, ipc).subList(0, 2));
    byte[] noise = new byte[64];
    new Random(1).nextBytes(noise);
    garbage.add(RawDoPut.flightData(null, noise, IngestProtocol.encodeRequestId(1), new byte[16]));
    expectInvalid(garbage, "DoPut message 3:");

    // No descriptor: answered at once, not after a minute.
    List<byte[]> noDescriptor = new ArrayList<>(frame(table, ipc));
    noDescriptor.set(0, RawDoPut.flightData(null, ipc.get(0).header(), null, null));
    long started = System.nanoTime();
    expectInvalid(noDescriptor, "the first message must carry the flight_descriptor");
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));

    // A PATH descriptor.
    List<byte[]> path = new ArrayList<>(frame(table, ipc));
    byte[] pathDescriptor = org.apache.arrow.flight.impl.Flight.FlightDescriptor.newBuilder()
        .setType(org.apache.arrow.flight.impl.Flight.FlightDescriptor.DescriptorType.PATH)
        .addPath("warehouse").addPath("t").build().toByteArray();
    path.set(0, RawDoPut.flightData(pathDescriptor, ipc.get(0).header(), null, null));
    expectInvalid(path, "must be a CMD descriptor (native ingest or a Flight SQL command), got PATH [warehouse, t]");

    // A stream that ends before any message.
    expectInvalid(List.of(), "the stream ended before its first message");
  }

  @Test
  void bulkIngestCreateWithZeroColumnsIsRefused() throws Exception {
    try (org.apache.arrow.flight.FlightClient client = org.apache.arrow.flight.FlightClient.builder(allocator,
            org.apache.arrow.flight.Location.forGrpcInsecure("127.0.0.1", server.port())).build();
        org.apache.arrow.flight.sql.FlightSqlClient sql = new org.apache.arrow.flight.sql.FlightSqlClient(client);
        VectorSchemaRoot empty = VectorSchemaRoot.create(new Schema(List.of()), allocator)) {
      var create = org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions.newBuilder()
          .setIfNotExist(org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions
              .TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE)
          .setIfExists(org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions
              .TableExistsOption.TABLE_EXISTS_OPTION_APPEND).build();
      var options = new org.apache.arrow.flight.sql.FlightSqlClient.ExecuteIngestOptions("no_columns", create,
          "warehouse", "safety", Map.of());
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> sql.executeIngest(empty, options))
          .isInstanceOfSatisfying(org.apache.arrow.flight.FlightRuntimeException.class, e -> {
            assertThat(e.status().code()).isEqualTo(org.apache.arrow.flight.FlightStatusCode.INVALID_ARGUMENT);
            assertThat(e.getMessage()).contains("cannot be created from a schema with no columns");
          });
    }
    assertThat(catalog.tableExists(TableIdentifier.parse("safety.no_columns"))).isFalse();
  }

  @Test
  void aCorruptWalFrameQuarantinesItsTableOnlyAndNeverReachesDuckDb() throws Exception {
    Table bad = create("safety.wal_bad", "id bigint not null, name string");
    Table good = create("safety.wal_good", "id bigint not null, name string");
    // A frame as the WAL holds it (table types, field ids) whose utf8 offset lies.
    Schema arrow = IcebergArrowSchemas.toArrow(bad.schema());
    List<RawDoPut.IpcMessage> messages;
    try (VectorSchemaRoot root = VectorSchemaRoot.create(arrow, allocator)) {
      fillStrings(root, 3);
      messages = RawDoPut.split(stream(root, null));
    }
    RawDoPut.IpcMessage batch = messages.get(messages.size() - 1);
    putInt(batch.body(), (int) buffer(batch, 3).offset() + 4, -100);
    TableWal badWal = new TableWal("warehouse", bad.uuid());
    new ObjectStoreWal(server.store(), "test-corrupt-writer").append(badWal, List.of(
        new WalFrame(WalOperation.UPSERT, bad.schema().schemaId(), new long[] {1}, 3, join(messages))));
    server.reconcileLoop().orElseThrow().trigger(badWal);

    String key = badWal.quarantineKey(1);
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (server.store().head(key).isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    String record = new String(server.store().get(key).orElseThrow().data(), StandardCharsets.UTF_8);
    assertThat(record).contains("\"seq\":1").contains("column `name`").contains("offset 1 (-100)");

    // Other tables keep going.
    assertThat(send(good, ipc(good, root -> fillStrings(root, 4), null)).status().getCode())
        .isEqualTo(Status.Code.OK);
    awaitRecords(good, 4);
    catalog.loadTable(TableIdentifier.parse("safety.wal_bad")).refresh();
    assertThat(catalog.loadTable(TableIdentifier.parse("safety.wal_bad")).currentSnapshot()).isNull();
  }

  // ---- fuzz ------------------------------------------------------------------------------

  /** A table and how to fill one valid batch of it. */
  private record Target(Table table, java.util.function.Consumer<VectorSchemaRoot> fill, Long dictionaryId) {}

  @Test
  void mutatedMessagesAreRejectedOrStoredAndPublishedNeverFatal() throws Exception {
    List<Target> targets = List.of(
        new Target(create("fuzz.ints", "id bigint not null, v int, f double"), IngestInputSafetyTest::fillInts, null),
        new Target(create("fuzz.strings", "id bigint not null, name string, data binary"),
            IngestInputSafetyTest::fillStringsAndBinary, null),
        new Target(create("fuzz.nested", "id bigint not null, tags list<string>, p struct<x: double, y: double>"),
            IngestInputSafetyTest::fillNested, null),
        new Target(create("fuzz.dict", "id bigint not null, name string"), null, 1L));
    Map<Table, AtomicLong> expected = new ConcurrentHashMap<>();
    Map<String, AtomicLong> outcomes = new ConcurrentHashMap<>();
    List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
    int cases = 2000;
    long deadline = System.nanoTime() + Duration.ofSeconds(35).toNanos();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    List<Future<?>> futures = new ArrayList<>();
    AtomicLong done = new AtomicLong();
    for (int t = 0; t < 4; t++) {
      int thread = t;
      futures.add(pool.submit(() -> {
        Random random = new Random(42 + thread);
        for (int i = thread; i < cases && System.nanoTime() < deadline; i += 4) {
          Target target = targets.get(i % targets.size());
          List<byte[]> messages;
          String mutation;
          try {
            List<RawDoPut.IpcMessage> ipc = target.dictionaryId() == null
                ? ipc(target.table(), target.fill(), null) : dictionaryIpc(target.table());
            mutation = mutate(ipc, random);
            messages = frame(target.table(), ipc);
            if (mutation.startsWith("drop")) {
              messages.remove(1 + random.nextInt(messages.size() - 1));
            } else if (mutation.startsWith("duplicate")) {
              int m = 1 + random.nextInt(messages.size() - 1);
              messages.add(m, messages.get(m));
            }
          } catch (RuntimeException e) {
            failures.add("case " + i + ": could not build: " + e);
            continue;
          }
          try {
            RawDoPut.Outcome outcome = RawDoPut.send(channel, messages, 20_000);
            Status.Code code = outcome.status().getCode();
            outcomes.computeIfAbsent(code.name(), k -> new AtomicLong()).incrementAndGet();
            // Every ack after the header's is a stored batch, also in a stream that failed later.
            expected.computeIfAbsent(target.table(), k -> new AtomicLong())
                .addAndGet((long) Math.max(0, outcome.results() - 1) * rowsOf(target));
            if (code != Status.Code.OK && (code != Status.Code.INVALID_ARGUMENT
                || outcome.status().getDescription() == null
                || outcome.status().getDescription().isBlank())) {
              failures.add("case " + i + " (" + target.table().name() + ", " + mutation + "): " + outcome.status());
            }
          } catch (Exception e) {
            failures.add("case " + i + ": " + e);
          }
          done.incrementAndGet();
        }
        return null;
      }));
    }
    for (Future<?> f : futures) {
      f.get(120, TimeUnit.SECONDS);
    }
    pool.shutdown();
    assertThat(failures).as("outcomes %s", outcomes).isEmpty();
    // Up to 2,000 cases in 35 s: about 1,500 on an idle 2-core machine, fewer under load.
    System.out.printf("fuzz: %d cases, outcomes %s%n", done.get(), outcomes);
    assertThat(done.get()).isGreaterThan(250);
    assertThat(outcomes.get("INVALID_ARGUMENT").get()).isGreaterThan(done.get() / 3);
    assertThat(outcomes.get("OK").get()).isGreaterThan(done.get() / 20);
    for (Map.Entry<Table, AtomicLong> e : expected.entrySet()) {
      awaitRecords(e.getKey(), e.getValue().get());
    }
    for (Target target : targets) {
      TableWal wal = new TableWal("warehouse", target.table().uuid());
      assertThat(server.store().list(wal.prefix() + "quarantine/")).as("quarantined %s", target.table().name()).isEmpty();
    }
    assertThat(peakResidentBytes()).isLessThan(MEMORY_BOUND);
  }

  private static int rowsOf(Target target) {
    return 5;
  }

  /** Applies one random mutation to the messages of a valid stream; returns what it did. */
  private static String mutate(List<RawDoPut.IpcMessage> ipc, Random random) {
    int index = random.nextInt(ipc.size());
    RawDoPut.IpcMessage m = ipc.get(index);
    Message message = m.message();
    byte[] h = m.header();
    int kind = random.nextInt(12);
    boolean batchLike = message.headerType() == MessageHeader.RecordBatch
        || message.headerType() == MessageHeader.DictionaryBatch;
    if (!batchLike && kind <= 8) {
      kind = 9 + random.nextInt(3);
    }
    RecordBatch rb = !batchLike ? null : message.headerType() == MessageHeader.RecordBatch
        ? (RecordBatch) message.header(new RecordBatch())
        : ((DictionaryBatch) message.header(new DictionaryBatch())).data();
    long[] wild = {-1, -100, 0, 1, 7, 1L << 31, Integer.MAX_VALUE, Long.MAX_VALUE, Long.MIN_VALUE,
        m.body().length, m.body().length + 8L, random.nextInt(1 << 20)};
    switch (kind) {
      case 0 -> {
        int length = random.nextInt(Math.max(1, m.body().length));
        ipc.set(index, new RawDoPut.IpcMessage(h, Arrays.copyOf(m.body(), length)));
        return "truncate body of message " + index + " to " + length;
      }
      case 1, 2 -> {
        int b = random.nextInt(rb.buffersLength());
        long value = wild[random.nextInt(wild.length)];
        putLong(h, RawDoPut.position(rb.buffers(new Buffer(), b)) + (kind == 1 ? 0 : 8), value);
        return (kind == 1 ? "offset" : "length") + " of buffer " + b + " of message " + index + " := " + value;
      }
      case 3, 4 -> {
        int n = random.nextInt(rb.nodesLength());
        FieldNode node = rb.nodes(new FieldNode(), n);
        long value = random.nextBoolean() ? wild[random.nextInt(wild.length)] : node.length() + random.nextInt(3) - 1;
        putLong(h, RawDoPut.position(node) + (kind == 3 ? 0 : 8), value);
        return (kind == 3 ? "length" : "null count") + " of node " + n + " of message " + index + " := " + value;
      }
      case 5 -> {
        long value = random.nextBoolean() ? wild[random.nextInt(wild.length)] : rb.length() + random.nextInt(3) - 1;
        putLong(h, RawDoPut.position(rb, 4), value);
        return "row count of message " + index + " := " + value;
      }
      case 6, 7 -> {
        if (m.body().length < 4) {
          return "nothing";
        }
        int at = random.nextInt(m.body().length / 4) * 4;
        int value = random.nextBoolean() ? (int) wild[random.nextInt(wild.length)] : random.nextInt();
        putInt(m.body(), at, value);
        return "body int at " + at + " of message " + index + " := " + value;
      }
      case 8 -> {
        if (message.headerType() != MessageHeader.DictionaryBatch) {
          return "nothing";
        }
        DictionaryBatch d = (DictionaryBatch) message.header(new DictionaryBatch());
        long id = random.nextInt(4);
        int position = RawDoPut.position(d, 4);
        if (position < 0) {
          return "nothing";
        }
        putLong(h, position, id);
        return "dictionary id := " + id;
      }
      case 9 -> {
        int flips = 1 + random.nextInt(4);
        for (int f = 0; f < flips; f++) {
          h[random.nextInt(h.length)] = (byte) random.nextInt(256);
        }
        return flips + " random header bytes of message " + index;
      }
      case 10 -> {
        byte[] noise = new byte[random.nextInt(h.length + 1)];
        random.nextBytes(noise);
        ipc.set(index, new RawDoPut.IpcMessage(noise, m.body()));
        return "random header of message " + index;
      }
      default -> {
        return random.nextBoolean() ? "drop a message" : "duplicate a message";
      }
    }
  }

  // ---- building streams ------------------------------------------------------------------

  private static Table create(String name, String columns) {
    TableIdentifier id = TableIdentifier.parse(name);
    Tables.create(catalog, id, TableDefinition.builder(columns).build());
    return catalog.loadTable(id);
  }

  /** The IPC messages of a stream of the table's schema holding one batch {@code fill} makes. */
  private static List<RawDoPut.IpcMessage> ipc(Table table,
      java.util.function.Consumer<VectorSchemaRoot> fill, DictionaryProvider dictionaries) {
    Schema schema = IcebergArrowSchemas.toArrow(table.schema());
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
      fill.accept(root);
      return RawDoPut.split(stream(root, dictionaries));
    }
  }

  /** A stream whose `name` column is dictionary-encoded (dictionary id 1). */
  private static List<RawDoPut.IpcMessage> dictionaryIpc(Table table) {
    DictionaryEncoding encoding = new DictionaryEncoding(1, false, new ArrowType.Int(32, true));
    Field nameField = new Field("name", new FieldType(true, new ArrowType.Int(32, true), encoding), null);
    Schema schema = new Schema(List.of(
        new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null), nameField));
    try (VarCharVector values = new VarCharVector("name", allocator);
        VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
      String[] words = {"alpha", "beta", "gamma"};
      for (int i = 0; i < words.length; i++) {
        values.setSafe(i, words[i].getBytes(StandardCharsets.UTF_8));
      }
      values.setValueCount(words.length);
      DictionaryProvider.MapDictionaryProvider provider = new DictionaryProvider.MapDictionaryProvider();
      provider.put(new Dictionary(values, encoding));
      BigIntVector id = (BigIntVector) root.getVector(0);
      IntVector index = (IntVector) root.getVector(1);
      for (int i = 0; i < 5; i++) {
        id.setSafe(i, i);
        index.setSafe(i, i % 3);
      }
      root.setRowCount(5);
      return RawDoPut.split(stream(root, provider));
    }
  }

  private static byte[] stream(VectorSchemaRoot root, DictionaryProvider dictionaries) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ArrowStreamWriter writer = new ArrowStreamWriter(root,
        dictionaries == null ? new DictionaryProvider.MapDictionaryProvider() : dictionaries, out)) {
      writer.start();
      writer.writeBatch();
      writer.end();
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
    return out.toByteArray();
  }

  /** An IPC stream of {@code messages} (with the end-of-stream marker). */
  private static byte[] join(List<RawDoPut.IpcMessage> messages) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (RawDoPut.IpcMessage m : messages) {
      out.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putInt(-1).putInt(m.header().length).array());
      out.writeBytes(m.header());
      out.writeBytes(m.body());
    }
    out.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putInt(-1).putInt(0).array());
    return out.toByteArray();
  }

  /** The native protocol's messages: schema with descriptor, header, then batches with ids. */
  private static List<byte[]> frame(Table table, List<RawDoPut.IpcMessage> ipc) {
    List<byte[]> out = new ArrayList<>();
    String name = table.name().substring(table.name().indexOf('.') + 1);
    int dot = name.lastIndexOf('.');
    byte[] header = IngestProtocol.encodeHeader(new IngestProtocol.Header("warehouse",
        List.of(name.substring(0, dot).split("\\.")), name.substring(dot + 1), WalOperation.UPSERT));
    long requestId = 1;
    for (int i = 0; i < ipc.size(); i++) {
      RawDoPut.IpcMessage m = ipc.get(i);
      if (i == 0) {
        out.add(RawDoPut.flightData(RawDoPut.cmdDescriptor(IngestProtocol.descriptor().getCommand()),
            m.header(), null, null));
        out.add(RawDoPut.flightData(null, null, header, null));
      } else {
        boolean isBatch = safeType(m) == MessageHeader.RecordBatch;
        out.add(RawDoPut.flightData(null, m.header(), isBatch ? IngestProtocol.encodeRequestId(requestId++) : null,
            m.body()));
      }
    }
    return out;
  }

  private static int safeType(RawDoPut.IpcMessage m) {
    try {
      return m.message().headerType();
    } catch (RuntimeException e) {
      return MessageHeader.RecordBatch; // garbage: sent as a batch
    }
  }

  private static RawDoPut.Outcome send(Table table, List<RawDoPut.IpcMessage> ipc) throws Exception {
    return RawDoPut.send(channel, frame(table, ipc), 20_000);
  }

  private static void expectInvalid(List<byte[]> messages, String text) throws Exception {
    RawDoPut.Outcome outcome = RawDoPut.send(channel, messages, 10_000);
    assertThat(outcome.status().getCode()).as("%s", outcome.status()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(outcome.status().getDescription()).contains(text);
  }

  private static RecordBatch recordBatch(RawDoPut.IpcMessage m) {
    return (RecordBatch) m.message().header(new RecordBatch());
  }

  private static Buffer buffer(RawDoPut.IpcMessage m, int index) {
    return recordBatch(m).buffers(new Buffer(), index);
  }

  private static void putInt(byte[] bytes, int position, int value) {
    RawDoPut.putInt(bytes, position, value);
  }

  private static void putLong(byte[] bytes, int position, long value) {
    RawDoPut.putLong(bytes, position, value);
  }

  private static void awaitRecords(Table table, long records) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    long seen = -1;
    while (System.nanoTime() < deadline) {
      Table current = catalog.loadTable(TableIdentifier.parse(table.name().substring(table.name().indexOf('.') + 1)));
      seen = current.currentSnapshot() == null ? 0
          : Long.parseLong(current.currentSnapshot().summary().getOrDefault("total-records", "0"));
      if (seen == records) {
        return;
      }
      Thread.sleep(100);
    }
    assertThat(seen).as("records published in %s", table.name()).isEqualTo(records);
  }

  /** Peak resident memory of this process (VmHWM), which a runaway allocation would raise. */
  private static long peakResidentBytes() throws java.io.IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmHWM:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      }
    }
    throw new IllegalStateException("no VmHWM in /proc/self/status");
  }

  // ---- data ------------------------------------------------------------------------------

  private static void fillStrings(VectorSchemaRoot root, int rows) {
    BigIntVector id = (BigIntVector) root.getVector(0);
    VarCharVector name = (VarCharVector) root.getVector(1);
    for (int i = 0; i < rows; i++) {
      id.setSafe(i, i);
      name.setSafe(i, ("n" + i).getBytes(StandardCharsets.UTF_8));
    }
    root.setRowCount(rows);
  }

  private static void fillInts(VectorSchemaRoot root) {
    for (int i = 0; i < 5; i++) {
      ((BigIntVector) root.getVector(0)).setSafe(i, i);
      if (i != 2) {
        ((IntVector) root.getVector(1)).setSafe(i, i * 10);
      }
      ((Float8Vector) root.getVector(2)).setSafe(i, i / 2.0);
    }
    root.setRowCount(5);
  }

  private static void fillStringsAndBinary(VectorSchemaRoot root) {
    for (int i = 0; i < 5; i++) {
      ((BigIntVector) root.getVector(0)).setSafe(i, i);
      ((VarCharVector) root.getVector(1)).setSafe(i, ("näme-" + i).getBytes(StandardCharsets.UTF_8));
      ((VarBinaryVector) root.getVector(2)).setSafe(i, new byte[] {(byte) i, 0, (byte) 0xff});
    }
    root.setRowCount(5);
  }

  private static void fillNested(VectorSchemaRoot root) {
    BigIntVector id = (BigIntVector) root.getVector(0);
    ListVector tags = (ListVector) root.getVector(1);
    StructVector p = (StructVector) root.getVector(2);
    UnionListWriter writer = tags.getWriter();
    Float8Vector x = (Float8Vector) p.getChild("x");
    Float8Vector y = (Float8Vector) p.getChild("y");
    for (int i = 0; i < 5; i++) {
      id.setSafe(i, i);
      writer.setPosition(i);
      writer.startList();
      for (int k = 0; k < i % 3; k++) {
        byte[] tag = ("t" + k).getBytes(StandardCharsets.UTF_8);
        try (org.apache.arrow.memory.ArrowBuf buf = allocator.buffer(tag.length)) {
          buf.setBytes(0, tag);
          writer.varChar().writeVarChar(0, tag.length, buf);
        }
      }
      writer.endList();
      p.setIndexDefined(i);
      x.setSafe(i, i);
      y.setSafe(i, -i);
    }
    writer.setValueCount(5);
    x.setValueCount(5);
    y.setValueCount(5);
    p.setValueCount(5);
    root.setRowCount(5);
  }
}
