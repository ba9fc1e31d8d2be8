package io.storageengine.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.ResolvingFileIO;
import org.apache.iceberg.io.SeekableInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Local table files written with java.nio behave as Hadoop's did where Iceberg can tell: the same
 * location text, parent directories made, an existing file refused by {@code create}, replaced
 * by {@code createOrOverwrite} (a checksum Hadoop wrote for the old content removed), and the
 * files read back through Hadoop; other locations stay with the wrapped FileIO.
 */
class LocalOutputFileTest {
  @TempDir Path dir;

  final HadoopFileIO hadoop = new HadoopFileIO(new Configuration());

  @Test
  void locationsAreWhatHadoopWouldRecord() {
    for (String location : new String[] {"file:" + dir + "/a/b.avro", "file://" + dir + "/a/b.avro",
        dir + "/a/b.avro", "file:" + dir + "/a/with space.json"}) {
      LocalOutputFile local = LocalOutputFile.forLocation(location, hadoop);
      assertThat(local).as(location).isNotNull();
      assertThat(local.location()).as(location).isEqualTo(hadoop.newOutputFile(location).location());
    }
    for (String other : new String[] {"s3://bucket/a/b.avro", "relative/b.avro", "file://host/a/b.avro",
        "gs://bucket/a"}) {
      assertThat(LocalOutputFile.forLocation(other, hadoop)).as(other).isNull();
    }
  }

  @Test
  void writesReadBackThroughHadoopWithPositionsAndParents() throws IOException {
    String location = "file:" + dir + "/metadata/deep/m.avro";
    OutputFile out = LocalOutputFile.forLocation(location, hadoop);
    byte[] bytes = "manifest bytes".getBytes(StandardCharsets.UTF_8);
    try (PositionOutputStream stream = out.create()) {
      stream.write(bytes, 0, 8);
      assertThat(stream.getPos()).isEqualTo(8);
      stream.write(bytes[8]);
      stream.write(bytes, 9, bytes.length - 9);
      assertThat(stream.getPos()).isEqualTo(bytes.length);
    }
    InputFile in = out.toInputFile();
    assertThat(in.getLength()).isEqualTo(bytes.length);
    assertThat(read(in)).isEqualTo(bytes);
    assertThat(read(hadoop.newInputFile(location))).isEqualTo(bytes);
    try (var files = Files.list(dir.resolve("metadata/deep"))) {
      assertThat(files.map(p -> p.getFileName().toString())).as("no checksum side file").containsExactly("m.avro");
    }
  }

  @Test
  void createRefusesAnExistingFileAndCreateOrOverwriteReplacesItsHadoopChecksumToo() throws IOException {
    String location = dir + "/v1.metadata.json";
    try (PositionOutputStream stream = hadoop.newOutputFile(location).create()) {
      stream.write("old content, longer".getBytes(StandardCharsets.UTF_8));
    }
    assertThat(dir.resolve(".v1.metadata.json.crc")).as("Hadoop's checksum of the old content").exists();
    LocalOutputFile local = LocalOutputFile.forLocation(location, hadoop);
    assertThatThrownBy(local::create).isInstanceOf(AlreadyExistsException.class)
        .hasMessage("Path already exists: " + location);
    assertThat(read(hadoop.newInputFile(location))).asString(StandardCharsets.UTF_8).isEqualTo("old content, longer");

    try (PositionOutputStream stream = local.createOrOverwrite()) {
      stream.write("new".getBytes(StandardCharsets.UTF_8));
    }
    assertThat(dir.resolve(".v1.metadata.json.crc")).doesNotExist();
    assertThat(read(hadoop.newInputFile(location))).asString(StandardCharsets.UTF_8).isEqualTo("new");
  }

  @Test
  void theTracingFileIOWritesLocalPathsOnlyWhereHadoopWouldHave() throws IOException {
    try (TracingFileIO io = new TracingFileIO()) {
      io.setConf(new Configuration());
      io.initialize(Map.of(TracingFileIO.DELEGATE_IMPL, ResolvingFileIO.class.getName(),
          CatalogProperties.WAREHOUSE_LOCATION, dir.toUri().toString()));
      String location = dir.toUri() + "t/metadata/00001.metadata.json";
      OutputFile out = io.newOutputFile(location);
      try (PositionOutputStream stream = out.createOrOverwrite()) {
        stream.write('{');
      }
      assertThat(out.location()).isEqualTo(hadoop.newOutputFile(location).location());
      assertThat(read(io.newInputFile(location))).containsExactly('{');
      assertThat(dir.resolve("t/metadata/.00001.metadata.json.crc")).as("written with java.nio").doesNotExist();
    }
    try (FileIO other = new TracingFileIO()) {
      other.initialize(Map.of(TracingFileIO.DELEGATE_IMPL, org.apache.iceberg.inmemory.InMemoryFileIO.class.getName()));
      OutputFile out = other.newOutputFile(dir + "/kept-by-the-delegate");
      try (PositionOutputStream stream = out.create()) {
        stream.write(1);
      }
      assertThat(dir.resolve("kept-by-the-delegate")).as("the in-memory FileIO kept it").doesNotExist();
    }
  }

  /** A tenant's storage root still holds: a local path outside it is refused and nothing is written. */
  @Test
  void aPathOutsideTheTenantsStorageRootIsStillRefused() throws IOException {
    Path root = Files.createDirectories(dir.resolve("tenant-a"));
    try (TracingFileIO io = new TracingFileIO()) {
      io.setConf(new Configuration());
      io.initialize(Map.of(LocationConfinement.ROOT_PROPERTY, root.toString()));
      String outside = dir.resolve("tenant-b/t/metadata/evil.json").toString();
      assertThatThrownBy(() -> io.newOutputFile(outside)).isInstanceOf(io.storageengine.common.SeException.class)
          .hasMessageContaining("outside the catalog's storage root");
      assertThat(dir.resolve("tenant-b")).doesNotExist();
    }
  }

  private static byte[] read(InputFile in) throws IOException {
    try (SeekableInputStream stream = in.newStream()) {
      return stream.readAllBytes();
    }
  }
}
