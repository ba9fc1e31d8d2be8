package io.storageengine.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.storageengine.common.SeException;
import io.storageengine.common.telemetry.RetryScope;
import io.storageengine.common.telemetry.SpanFields;
import io.storageengine.common.telemetry.Telemetry;
import io.storageengine.secretstore.SecretResolver;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.inmemory.InMemoryFileIO;
import org.apache.iceberg.io.BulkDeletionFailureException;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.ResolvingFileIO;
import org.apache.iceberg.io.SeekableInputStream;
import org.apache.iceberg.io.SupportsBulkOperations;
import org.apache.iceberg.io.SupportsPrefixOperations;
import org.apache.iceberg.parquet.Parquet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TracingFileIOTest {
  private static final String SECRET = "sEcReT-9f8e7d";
  private static final String ACCESS_KEY = "AKIA-TRACE-TEST";

  @TempDir Path dir;
  private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  private Telemetry telemetry;
  private TracingFileIO.Binding binding;

  @BeforeEach
  void bindTelemetry() {
    telemetry = Telemetry.builder().spanProcessor(SimpleSpanProcessor.create(exporter)).build();
    binding = TracingFileIO.bind(telemetry);
  }

  @AfterEach
  void closeTelemetry() {
    binding.close();
    telemetry.close();
  }

  @Test
  void tableLifecycleThroughTheCatalogIsTracedAsTableStorage() throws Exception {
    String warehouse = CatalogFactory.fileLocation(dir.resolve("wh"));
    CatalogConfig config = CatalogConfig.sql("jdbc:sqlite:" + dir.resolve("catalog.db"), warehouse)
        .withProperties(Map.of("s3.secret-access-key", SECRET, "s3.access-key-id", ACCESS_KEY));
    TableIdentifier id = TableIdentifier.of("db", "events");
    Catalog catalog = new CatalogFactory(Optional.empty(), SecretResolver.NONE, binding.id()).build("tenant", config);
    String createdMetadata;
    String dataPath;
    long dataSize;
    try (AutoCloseable closeable = (AutoCloseable) catalog) {
      Table table = Tables.create(catalog, id, TableDefinition.builder("id bigint, name string").build());
      assertThat(table.io()).isInstanceOf(TracingFileIO.class);
      assertThat(((TracingFileIO) table.io()).delegate()).isInstanceOf(ResolvingFileIO.class);
      createdMetadata = metadataLocation(table);
      DataFile file = appendRows(table, 2);
      dataPath = URI.create(file.location()).getPath();
      dataSize = file.fileSizeInBytes();

      Table loaded = catalog.loadTable(id);
      try (CloseableIterable<Record> rows = IcebergGenerics.read(loaded).build()) {
        assertThat(rows).hasSize(2);
      }
      assertThat(loaded.io().newInputFile(file.location()).getLength()).isEqualTo(file.fileSizeInBytes());
      String loadedMetadata = metadataLocation(loaded);
      // What orphan-file cleanup does on remote warehouses: list the table's files through its FileIO.
      assertThat(loaded.io()).isInstanceOf(SupportsPrefixOperations.class).isInstanceOf(SupportsBulkOperations.class);
      List<String> tableFiles = new ArrayList<>();
      ((SupportsPrefixOperations) loaded.io()).listPrefix(loaded.location())
          .forEach(f -> tableFiles.add(URI.create(f.location()).getPath()));
      assertThat(tableFiles).contains(dataPath, URI.create(loadedMetadata).getPath());
      assertThat(catalog.dropTable(id, true)).isTrue();

      List<SpanData> spans = exporter.getFinishedSpanItems();
      assertThat(spans).isNotEmpty().extracting(SpanData::getName).containsOnly(SpanFields.STORAGE_OPERATION);
      assertThat(spans).extracting(s -> s.getAttributes().get(SpanFields.IO_OPERATION))
          .contains("put", "put_if_absent", "get", "head", "list", "delete");
      assertThat(spans).anySatisfy(s -> {
        assertThat(s.getAttributes().get(SpanFields.IO_OPERATION)).isEqualTo("list");
        assertThat(s.getAttributes().get(SpanFields.IO_RESULT_COUNT)).isEqualTo(tableFiles.size());
      });
      String root = dir.resolve("wh").toAbsolutePath().toString();
      for (SpanData span : spans) {
        assertThat(span.getAttributes().get(SpanFields.IO_ROOT)).isEqualTo(root);
        assertThat(span.getAttributes().get(SpanFields.IO_BUCKET)).isNull();
        assertThat(span.getAttributes().get(SpanFields.IO_RETRY_COUNT)).isZero();
        assertThat(span.getAttributes().get(SpanFields.ERROR)).as(span.toString()).isFalse();
        for (Map.Entry<AttributeKey<?>, Object> field : span.getAttributes().asMap().entrySet()) {
          assertThat(String.valueOf(field.getValue())).as(field.getKey().getKey())
              .doesNotContain(SECRET).doesNotContain(ACCESS_KEY);
        }
      }

      // The first metadata file was written whole, the data file created, the current one read.
      SpanData written = only(spans, "put", URI.create(createdMetadata).getPath());
      assertThat(written.getAttributes().get(SpanFields.IO_SIZE)).isPositive();
      SpanData created = only(spans, "put_if_absent", dataPath);
      assertThat(created.getAttributes().get(SpanFields.IO_SIZE)).isEqualTo(dataSize);
      assertThat(created.getAttributes().get(SpanFields.IO_CONDITION_MET)).isTrue();
      assertThat(spans).anySatisfy(s -> {
        assertThat(s.getAttributes().get(SpanFields.IO_OPERATION)).isEqualTo("get");
        assertThat(s.getAttributes().get(SpanFields.IO_PATH)).isEqualTo(URI.create(loadedMetadata).getPath());
        assertThat(s.getAttributes().get(SpanFields.IO_SIZE)).isPositive();
      });
      assertThat(spans).anySatisfy(s -> {
        assertThat(s.getAttributes().get(SpanFields.IO_OPERATION)).isEqualTo("get");
        assertThat(s.getAttributes().get(SpanFields.IO_PATH)).isEqualTo(dataPath);
      });
      assertThat(spans).anySatisfy(s -> {
        assertThat(s.getAttributes().get(SpanFields.IO_OPERATION)).isEqualTo("head");
        assertThat(s.getAttributes().get(SpanFields.IO_PATH)).isEqualTo(dataPath);
        assertThat(s.getAttributes().get(SpanFields.IO_SIZE)).isEqualTo(dataSize);
      });
      // Dropping with purge deleted the table's files in bulk.
      assertThat(spans).anySatisfy(s -> {
        assertThat(s.getAttributes().get(SpanFields.IO_OPERATION)).isEqualTo("delete");
        assertThat(s.getAttributes().get(SpanFields.IO_RESULT_COUNT)).isPositive();
      });
      assertThat(Path.of(dataPath)).doesNotExist();
    }
    assertThat(telemetry.metrics().scrape())
        .contains("se_objectstore_operation_duration_seconds_count{operation=\"get\",outcome=\"ok\",storage=\"table\"}")
        .contains("se_objectstore_operation_duration_seconds_count{operation=\"put\",outcome=\"ok\",storage=\"table\"}");
  }

  @Test
  void listPrefixAndDeleteFilesDelegateOnALocalWarehouse() {
    String warehouse = CatalogFactory.fileLocation(dir.resolve("wh"));
    try (TracingFileIO io = localIo(warehouse)) {
      for (String name : List.of("a.bin", "b.bin", "sub/c.bin")) {
        write(io, warehouse + "/t/data/" + name, "payload-" + name);
      }
      exporter.reset();

      List<String> listed = new ArrayList<>();
      for (FileInfo file : io.listPrefix(warehouse + "/t/data")) {
        listed.add(URI.create(file.location()).getPath());
      }
      String data = dir.resolve("wh/t/data").toAbsolutePath().toString();
      assertThat(listed).containsExactlyInAnyOrder(data + "/a.bin", data + "/b.bin", data + "/sub/c.bin");
      SpanData list = exporter.getFinishedSpanItems().get(0);
      assertThat(list.getAttributes().get(SpanFields.IO_OPERATION)).isEqualTo("list");
      assertThat(list.getAttributes().get(SpanFields.IO_PATH)).isEqualTo(data);
      assertThat(list.getAttributes().get(SpanFields.IO_RESULT_COUNT)).isEqualTo(3);
      assertThat(list.getAttributes().get(SpanFields.ERROR)).isFalse();

      exporter.reset();
      io.deleteFiles(List.of(warehouse + "/t/data/a.bin", warehouse + "/t/data/sub/c.bin"));
      SpanData delete = exporter.getFinishedSpanItems().get(0);
      assertThat(delete.getAttributes().get(SpanFields.IO_OPERATION)).isEqualTo("delete");
      assertThat(delete.getAttributes().get(SpanFields.IO_RESULT_COUNT)).isEqualTo(2);
      assertThat(delete.getAttributes().get(SpanFields.IO_PATH)).isEqualTo(data + "/");
      assertThat(dir.resolve("wh/t/data/a.bin")).doesNotExist();
      assertThat(dir.resolve("wh/t/data/b.bin")).exists();

      io.deleteFiles(List.of()); // nothing to delete: no call, no span
      io.deleteFile(warehouse + "/t/data/b.bin");
      assertThat(io.listPrefix(warehouse + "/t/data")).isEmpty();
      assertThat(exporter.getFinishedSpanItems()).extracting(s -> s.getAttributes().get(SpanFields.IO_OPERATION))
          .containsExactly("delete", "delete", "list");
    }
  }

  @Test
  void aMissingFileIsAFailedGetAndHead() {
    String warehouse = CatalogFactory.fileLocation(dir.resolve("wh"));
    String missing = warehouse + "/t/metadata/missing.metadata.json";
    String path = dir.resolve("wh/t/metadata/missing.metadata.json").toAbsolutePath().toString();
    try (TracingFileIO io = localIo(warehouse)) {
      InputFile file = io.newInputFile(missing);
      assertThatThrownBy(file::newStream).isInstanceOf(NotFoundException.class)
          .hasMessage("Failed to open input stream for file: file:" + path);
      assertThatThrownBy(file::getLength).isInstanceOf(NotFoundException.class)
          .hasMessageContaining(path);
      assertThat(file.exists()).isFalse();
    }
    List<SpanData> spans = exporter.getFinishedSpanItems();
    assertThat(spans).extracting(s -> s.getAttributes().get(SpanFields.IO_OPERATION))
        .containsExactly("get", "head", "head");
    for (SpanData failed : spans.subList(0, 2)) {
      assertThat(failed.getAttributes().get(SpanFields.IO_PATH)).isEqualTo(path);
      assertThat(failed.getAttributes().get(SpanFields.ERROR)).isTrue();
      assertThat(failed.getAttributes().get(SpanFields.ERROR_KIND)).isEqualTo("NotFoundException");
      assertThat(failed.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    }
    // "Does not exist" is an answer, not a failure.
    assertThat(spans.get(2).getAttributes().get(SpanFields.ERROR)).isFalse();
    assertThat(telemetry.metrics().scrape()).contains(
        "se_objectstore_operation_duration_seconds_count{operation=\"get\",outcome=\"error\",storage=\"table\"} 1");
  }

  @Test
  void streamsReportTheBytesMovedOnceClosedAndCreateIsConditional() throws IOException {
    String warehouse = CatalogFactory.fileLocation(dir.resolve("wh"));
    String location = warehouse + "/t/metadata/v1.metadata.json";
    try (TracingFileIO io = localIo(warehouse)) {
      try (PositionOutputStream out = io.newOutputFile(location).create()) {
        out.write("0123456789".getBytes(StandardCharsets.UTF_8));
        assertThat(exporter.getFinishedSpanItems()).as("open until closed").isEmpty();
      }
      assertThatThrownBy(() -> io.newOutputFile(location).create())
          .isInstanceOf(AlreadyExistsException.class)
          .hasMessage("Path already exists: file:" + dir.resolve("wh/t/metadata/v1.metadata.json").toAbsolutePath());
      try (SeekableInputStream in = io.newInputFile(location).newStream()) {
        in.seek(4);
        assertThat(in.read()).isEqualTo('4');
        assertThat(in.readNBytes(3)).isEqualTo("567".getBytes(StandardCharsets.UTF_8));
      }
    }
    List<SpanData> spans = exporter.getFinishedSpanItems();
    assertThat(spans).extracting(s -> s.getAttributes().get(SpanFields.IO_OPERATION))
        .containsExactly("put_if_absent", "put_if_absent", "get");
    assertThat(spans.get(0).getAttributes().get(SpanFields.IO_SIZE)).isEqualTo(10);
    assertThat(spans.get(0).getAttributes().get(SpanFields.IO_CONDITION_MET)).isTrue();
    assertThat(spans.get(1).getAttributes().get(SpanFields.IO_CONDITION_MET)).isFalse();
    assertThat(spans.get(1).getAttributes().get(SpanFields.ERROR_KIND)).isEqualTo("AlreadyExistsException");
    assertThat(spans.get(2).getAttributes().get(SpanFields.IO_SIZE)).isEqualTo(4);
    // No payload bytes in any field.
    assertThat(spans).allSatisfy(s -> assertThat(s.getAttributes().asMap().values())
        .allSatisfy(v -> assertThat(String.valueOf(v)).doesNotContain("0123")));
  }

  @Test
  void objectStoreLocationsReportBucketKeyAndWarehouseRoot() throws IOException {
    TracingFileIO io = new TracingFileIO(telemetry);
    io.initialize(Map.of(TracingFileIO.DELEGATE_IMPL, InMemoryFileIO.class.getName(),
        "warehouse", "s3://lake-bucket/warehouse", "s3.secret-access-key", SECRET));
    try (io; PositionOutputStream out = io.newOutputFile("s3://lake-bucket/warehouse/db/t/data/f.parquet")
        .createOrOverwrite()) {
      out.write(new byte[] {1, 2, 3});
    }
    SpanData span = exporter.getFinishedSpanItems().get(0);
    assertThat(span.getAttributes().get(SpanFields.IO_OPERATION)).isEqualTo("put");
    assertThat(span.getAttributes().get(SpanFields.IO_BUCKET)).isEqualTo("lake-bucket");
    assertThat(span.getAttributes().get(SpanFields.IO_PATH)).isEqualTo("warehouse/db/t/data/f.parquet");
    assertThat(span.getAttributes().get(SpanFields.IO_ROOT)).isEqualTo("warehouse");
    assertThat(span.getAttributes().get(SpanFields.IO_SIZE)).isEqualTo(3);
    assertThat(span.getAttributes().asMap().values()).allSatisfy(v -> assertThat(String.valueOf(v)).doesNotContain(SECRET));
  }

  @Test
  void locationsAreSplitWithoutCredentials() {
    assertThat(StorageLocation.parse("s3://b/k/x.json")).isEqualTo(new StorageLocation("b", "k/x.json"));
    assertThat(StorageLocation.parse("s3a://b")).isEqualTo(new StorageLocation("b", ""));
    assertThat(StorageLocation.parse("abfss://container@account.dfs.core.windows.net/t/f"))
        .isEqualTo(new StorageLocation("container@account.dfs.core.windows.net", "t/f"));
    assertThat(StorageLocation.parse("file:///tmp/w/f")).isEqualTo(new StorageLocation(null, "/tmp/w/f"));
    assertThat(StorageLocation.parse("file:/tmp/w/f")).isEqualTo(new StorageLocation(null, "/tmp/w/f"));
    assertThat(StorageLocation.parse("/tmp/w/f")).isEqualTo(new StorageLocation(null, "/tmp/w/f"));
    assertThat(StorageLocation.parse("C:\\w\\f")).isEqualTo(new StorageLocation(null, "C:\\w\\f"));
    assertThat(StorageLocation.parse("hdfs://user:pw@namenode:8020/w/f"))
        .isEqualTo(new StorageLocation("namenode:8020", "w/f"));
    assertThat(StorageLocation.parse("s3://b/f?token=abc&part=1"))
        .isEqualTo(new StorageLocation("b", "f?token=**redacted**&part=1"));
    assertThat(StorageLocation.parse(null)).isNull();
  }

  @Test
  void aDelegateWithoutPrefixOperationsCannotListAndDeletesFilesOneByOne() {
    TracingFileIO io = new TracingFileIO(telemetry);
    io.initialize(Map.of(TracingFileIO.DELEGATE_IMPL, InMemoryFileIO.class.getName()));
    try (io) {
      assertThatThrownBy(() -> io.listPrefix("mem://t/"))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessage("FileIO org.apache.iceberg.inmemory.InMemoryFileIO cannot list files under a prefix "
              + "(it does not implement SupportsPrefixOperations)");
      assertThatThrownBy(() -> io.deletePrefix("mem://t/"))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessage("FileIO org.apache.iceberg.inmemory.InMemoryFileIO cannot delete files under a prefix "
              + "(it does not implement SupportsPrefixOperations)");
      write(io, "mem://t/a", "a");
      write(io, "mem://t/b", "b");
      exporter.reset();
      assertThatThrownBy(() -> io.deleteFiles(List.of("mem://t/a", "mem://t/missing", "mem://t/b")))
          .isInstanceOf(BulkDeletionFailureException.class)
          .hasMessage("Failed to delete 1 files");
      for (String deleted : List.of("mem://t/a", "mem://t/b")) {
        assertThatThrownBy(() -> io.newInputFile(deleted)).isInstanceOf(NotFoundException.class)
            .hasMessage("No in-memory file found for location: " + deleted);
      }
    }
    SpanData delete = exporter.getFinishedSpanItems().get(0);
    assertThat(delete.getAttributes().get(SpanFields.IO_OPERATION)).isEqualTo("delete");
    assertThat(delete.getAttributes().get(SpanFields.IO_RESULT_COUNT)).isEqualTo(3);
    assertThat(delete.getAttributes().get(SpanFields.ERROR_KIND)).isEqualTo("BulkDeletionFailureException");
  }

  @Test
  void retriesOfOneCallAreOneSpanThatRecovers() {
    TracingFileIO io = new TracingFileIO(telemetry);
    io.initialize(Map.of(TracingFileIO.DELEGATE_IMPL, InMemoryFileIO.class.getName()));
    try (io; RetryScope scope = RetryScope.open()) {
      // InMemoryFileIO refuses to delete a missing file: the retry loop writes it and retries.
      for (int attempt = 1; ; attempt++) {
        try {
          io.deleteFile("mem://t/x");
          break;
        } catch (NotFoundException e) {
          assertThat(attempt).isEqualTo(1);
          write(io, "mem://t/x", "x");
          scope.retrying("not_found");
        }
      }
    }
    List<SpanData> spans = exporter.getFinishedSpanItems();
    SpanData delete = spans.stream()
        .filter(s -> "delete".equals(s.getAttributes().get(SpanFields.IO_OPERATION))).findFirst().orElseThrow();
    assertThat(spans).filteredOn(s -> "delete".equals(s.getAttributes().get(SpanFields.IO_OPERATION))).hasSize(1);
    assertThat(delete.getAttributes().get(SpanFields.IO_RETRY_COUNT)).isEqualTo(1);
    assertThat(delete.getAttributes().get(SpanFields.IO_RETRY_ERROR_KIND)).isEqualTo("not_found");
    assertThat(delete.getAttributes().get(SpanFields.ERROR)).isFalse();
    assertThat(RetryScope.current()).isNull();
  }

  @Test
  void hadoopConfigurationReachesTheDelegateAndSelfWrappingIsRefused() {
    Configuration conf = new Configuration(false);
    conf.set("se.test.marker", "yes");
    TracingFileIO io = new TracingFileIO(telemetry);
    io.setConf(conf);
    io.initialize(Map.of(TracingFileIO.DELEGATE_IMPL, HadoopFileIO.class.getName()));
    try (io) {
      assertThat(io.delegate()).isInstanceOf(HadoopFileIO.class);
      assertThat(((HadoopFileIO) io.delegate()).getConf().get("se.test.marker")).isEqualTo("yes");
      assertThat(io.getConf().get("se.test.marker")).isEqualTo("yes");
    }
    assertThatThrownBy(() -> new TracingFileIO(telemetry).initialize(
        Map.of(TracingFileIO.DELEGATE_IMPL, TracingFileIO.class.getName())))
        .isInstanceOf(SeException.class)
        .hasMessage("FileIO property se.io.delegate-impl: io.storageengine.catalog.TracingFileIO cannot wrap "
            + "itself; name the FileIO to trace");
    assertThatThrownBy(() -> new TracingFileIO(telemetry).newInputFile("x"))
        .isInstanceOf(IllegalStateException.class).hasMessage("TracingFileIO is not initialized");
  }

  @Test
  void survivesJavaSerializationAndThenReportsToItsBinding() throws Exception {
    String warehouse = CatalogFactory.fileLocation(dir.resolve("wh"));
    byte[] serialized;
    TracingFileIO bound = new TracingFileIO();
    bound.setConf(new Configuration());
    bound.initialize(Map.of("warehouse", warehouse, TracingFileIO.TELEMETRY_BINDING, binding.id()));
    try (TracingFileIO io = bound) {
      write(io, warehouse + "/f.bin", "f");
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
        out.writeObject(io);
      }
      serialized = bytes.toByteArray();
    }
    exporter.reset();
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(serialized));
        TracingFileIO copy = (TracingFileIO) in.readObject()) {
      assertThat(copy.newInputFile(warehouse + "/f.bin").exists()).isTrue();
    }
    assertThat(exporter.getFinishedSpanItems()).extracting(s -> s.getAttributes().get(SpanFields.IO_OPERATION))
        .containsExactly("head");
  }

  @Test
  void withTracingOffCallsWorkAndOnlyMetricsMove() {
    try (Telemetry off = Telemetry.disabled()) {
      TracingFileIO io = new TracingFileIO(off);
      io.initialize(Map.of(TracingFileIO.DELEGATE_IMPL, InMemoryFileIO.class.getName()));
      try (io) {
        write(io, "mem://t/a", "abc");
        assertThat(io.newInputFile("mem://t/a").getLength()).isEqualTo(3);
      }
      assertThat(exporter.getFinishedSpanItems()).isEmpty();
      assertThat(off.metrics().scrape()).contains(
          "se_objectstore_operation_duration_seconds_count{operation=\"head\",outcome=\"ok\",storage=\"table\"} 1");
    }
  }

  private TracingFileIO localIo(String warehouse) {
    TracingFileIO io = new TracingFileIO(telemetry);
    io.setConf(new Configuration());
    Map<String, String> props = new HashMap<>();
    props.put("warehouse", warehouse);
    io.initialize(props);
    return io;
  }

  private static void write(TracingFileIO io, String location, String content) {
    try (PositionOutputStream out = io.newOutputFile(location).createOrOverwrite()) {
      out.write(content.getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String metadataLocation(Table table) {
    return ((HasTableOperations) table).operations().current().metadataFileLocation();
  }

  private static DataFile appendRows(Table table, int rows) throws IOException {
    String location = table.locationProvider().newDataLocation(UUID.randomUUID() + ".parquet");
    DataWriter<Record> writer = Parquet.writeData(table.io().newOutputFile(location))
        .schema(table.schema())
        .createWriterFunc(GenericParquetWriter::create)
        .withSpec(table.spec())
        .build();
    try (writer) {
      for (long i = 0; i < rows; i++) {
        GenericRecord record = GenericRecord.create(table.schema());
        record.setField("id", i);
        record.setField("name", "row-" + i);
        writer.write(record);
      }
    }
    DataFile file = writer.toDataFile();
    table.newAppend().appendFile(file).commit();
    return file;
  }

  private static SpanData only(List<SpanData> spans, String operation, String path) {
    List<SpanData> matching = spans.stream()
        .filter(s -> operation.equals(s.getAttributes().get(SpanFields.IO_OPERATION))
            && path.equals(s.getAttributes().get(SpanFields.IO_PATH)))
        .toList();
    assertThat(matching).as(operation + " " + path).hasSize(1);
    return matching.get(0);
  }
}
