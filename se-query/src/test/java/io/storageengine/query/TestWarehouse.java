package io.storageengine.query;

import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.SeException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.parquet.Parquet;

/** Iceberg v3 tables built with Iceberg's own API, in per-tenant test catalogs. */
final class TestWarehouse implements TenantCatalogs {
  private final Map<String, Catalog> catalogs = new ConcurrentHashMap<>();

  /** A catalog on the local file system (HadoopCatalog), registered as tenant {@code id}. */
  Catalog localCatalog(String id, Path directory) {
    HadoopCatalog catalog = new HadoopCatalog(new Configuration(), directory.toUri().toString());
    catalogs.put(id, catalog);
    return catalog;
  }

  /** A catalog whose files live in memory behind a non-{@code file:} scheme: read through the cache. */
  Catalog remoteCatalog(String id) {
    InMemoryCatalog catalog = new InMemoryCatalog();
    catalog.initialize(id, Map.of("warehouse", "mem://" + id));
    catalogs.put(id, catalog);
    return catalog;
  }

  @Override
  public Catalog catalog(String catalogId) {
    Catalog catalog = catalogs.get(catalogId);
    if (catalog == null) {
      throw SeException.notFound("catalog %s does not exist", catalogId);
    }
    return catalog;
  }

  static Table createTable(Catalog catalog, String namespace, String name, Schema schema, PartitionSpec spec) {
    Namespace ns = Namespace.of(namespace.split("\\."));
    if (catalog instanceof SupportsNamespaces namespaces) {
      for (int i = 1; i <= ns.length(); i++) {
        Namespace prefix = Namespace.of(java.util.Arrays.copyOf(ns.levels(), i));
        if (!namespaces.namespaceExists(prefix)) {
          namespaces.createNamespace(prefix);
        }
      }
    }
    return catalog.buildTable(TableIdentifier.of(ns, name), schema).withPartitionSpec(spec)
        .withProperty("format-version", "3").create();
  }

  static Record record(Schema schema, Object... values) {
    GenericRecord record = GenericRecord.create(schema);
    for (int i = 0; i < values.length; i++) {
      record.set(i, values[i]);
    }
    return record;
  }

  /** Writes {@code records} as one Parquet data file per partition and appends them. */
  static List<DataFile> append(Table table, List<Record> records) {
    Map<StructLike, List<Record>> byPartition = new java.util.LinkedHashMap<>();
    PartitionKey key = new PartitionKey(table.spec(), table.schema());
    InternalRecordWrapper wrapper = new InternalRecordWrapper(table.schema().asStruct());
    for (Record record : records) {
      key.partition(wrapper.wrap(record));
      byPartition.computeIfAbsent(key.copy(), k -> new java.util.ArrayList<>()).add(record);
    }
    List<DataFile> files = new java.util.ArrayList<>();
    var append = table.newAppend();
    for (Map.Entry<StructLike, List<Record>> entry : byPartition.entrySet()) {
      String location = table.spec().isUnpartitioned()
          ? table.locationProvider().newDataLocation(UUID.randomUUID() + ".parquet")
          : table.locationProvider().newDataLocation(table.spec(), entry.getKey(), UUID.randomUUID() + ".parquet");
      try {
        DataWriter<Record> writer = Parquet.writeData(table.io().newOutputFile(location))
            .schema(table.schema())
            .createWriterFunc(GenericParquetWriter::create)
            .withSpec(table.spec())
            .withPartition(table.spec().isUnpartitioned() ? null : entry.getKey())
            .overwrite()
            .build();
        try (writer) {
          entry.getValue().forEach(writer::write);
        }
        DataFile file = writer.toDataFile();
        files.add(file);
        append.appendFile(file);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    append.commit();
    return files;
  }

  /** Deletes row positions of {@code file} with a deletion vector committed by a RowDelta. */
  static void deletePositions(Table table, DataFile file, long... positions) {
    OutputFileFactory files = OutputFileFactory.builderFor(table, 1, System.nanoTime()).format(FileFormat.PUFFIN).build();
    BaseDVFileWriter writer = new BaseDVFileWriter(files, path -> null);
    try {
      try (writer) {
        for (long position : positions) {
          writer.delete(file.location(), position, table.specs().get(file.specId()), file.partition());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    RowDelta delta = table.newRowDelta();
    for (DeleteFile delete : writer.result().deleteFiles()) {
      delta.addDeletes(delete);
    }
    delta.commit();
  }

  /** Removes a test directory tree. */
  static void deleteRecursively(Path root) throws IOException {
    try (var paths = java.nio.file.Files.walk(root)) {
      for (Path path : (Iterable<Path>) paths.sorted(java.util.Comparator.reverseOrder())::iterator) {
        java.nio.file.Files.deleteIfExists(path);
      }
    }
  }
}
