package io.storageengine.cli;

import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.TableDescription;
import io.storageengine.catalog.Tables;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.reconcile.ReconcileStatus;
import io.storageengine.common.SeException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code se table create|describe|drop}, through the server's Iceberg REST facade. */
@Command(name = "table", mixinStandardHelpOptions = true, description = "Create, describe and drop tables in a tenant catalog.",
    subcommands = {TableCommand.Create.class, TableCommand.Describe.class, TableCommand.Drop.class})
final class TableCommand {

  abstract static class Base implements Callable<Integer> {
    @Option(names = "--server-address", defaultValue = "http://127.0.0.1:7777", description = "Server (default ${DEFAULT-VALUE}).")
    String serverAddress;

    @Option(names = "--catalog-id", required = true, description = "Tenant catalog id.")
    String catalogId;

    @Option(names = "--table", required = true, paramLabel = "NS.TABLE", description = "Table, e.g. analytics.events.page_views")
    String table;

    @Override
    public Integer call() throws Exception {
      TableIdentifier ident = Tables.parseIdentifier(table);
      try (RESTCatalog catalog = RemoteCatalog.open(serverAddress, catalogId)) {
        return run(catalog, ident);
      } catch (NoSuchTableException e) {
        throw SeException.notFound("table '%s' not found in catalog '%s'", ident, catalogId);
      } catch (org.apache.iceberg.exceptions.RESTException e) {
        throw new SeException(ErrorCode.UNAVAILABLE, "server at " + serverAddress + ": " + e.getMessage());
      }
    }

    abstract int run(RESTCatalog catalog, TableIdentifier ident);

    String reconcileStatus(String uuid) {
      return TableCommand.reconcileStatus(new HttpApi(serverAddress), catalogId, uuid);
    }
  }

  @Command(name = "create", mixinStandardHelpOptions = true, description = "Create a format v3 table.")
  static final class Create extends Base {
    @Option(names = "--schema", required = true, description = "Columns, e.g. 'id bigint not null, name string, ts timestamptz'")
    String schema;

    @Option(names = "--mode", defaultValue = "append", description = "append (default) or entity")
    String mode;

    @Option(names = "--primary-key", split = ",", description = "Entity tables: key columns (not null)")
    List<String> primaryKey;

    @Option(names = "--version-column", description = "Entity tables: highest version wins per key")
    String versionColumn;

    @Option(names = "--partition-by", description = "e.g. 'day(ts), bucket(16, id)'")
    String partitionBy;

    @Option(names = "--sort-by", description = "e.g. 'name, ts desc'")
    String sortBy;

    @Override
    int run(RESTCatalog catalog, TableIdentifier ident) {
      TableDefinition.Builder b = TableDefinition.builder(schema).mode(TableDefinition.Mode.parse(mode));
      if (primaryKey != null) {
        b.primaryKey(primaryKey);
      }
      if (versionColumn != null) {
        b.versionColumn(versionColumn);
      }
      if (partitionBy != null) {
        b.partitionBy(partitionBy);
      }
      if (sortBy != null) {
        b.sortBy(sortBy);
      }
      Table created = Tables.create(catalog, ident, b.build());
      System.out.println("created " + mode + " table " + ident + " (uuid " + created.uuid() + ")");
      return 0;
    }
  }

  @Command(name = "describe", mixinStandardHelpOptions = true, description = "Show a table's mode, key, schema and layout.")
  static final class Describe extends Base {
    @Override
    int run(RESTCatalog catalog, TableIdentifier ident) {
      TableDescription d = Tables.describe(catalog.loadTable(ident));
      System.out.println("table:          " + ident);
      System.out.println("uuid:           " + d.uuid());
      System.out.println("location:       " + d.location());
      System.out.println("format version: " + d.formatVersion());
      System.out.println("mode:           " + d.mode().propertyValue());
      if (!d.primaryKey().isEmpty()) {
        System.out.println("primary key:    " + String.join(", ", d.primaryKey()));
      }
      d.versionColumn().ifPresent(v -> System.out.println("version column: " + v));
      System.out.println("partitioned by: " + (d.partitionSpec().isUnpartitioned() ? "-" : d.partitionSpec().fields()));
      System.out.println("sorted by:      " + (d.sortOrder().isUnsorted() ? "-" : d.sortOrder().fields()));
      System.out.println("snapshot:       " + d.currentSnapshotId().map(String::valueOf).orElse("-"));
      System.out.println("wal seq:        " + d.walSeq().map(String::valueOf).orElse("-"));
      System.out.println("reconcile:      " + reconcileStatus(d.uuid()));
      System.out.println("columns:");
      for (Types.NestedField f : d.schema().columns()) {
        System.out.printf("  %-3d %-24s %s%s%n", f.fieldId(), f.name(), f.type(), f.isRequired() ? " not null" : "");
      }
      return 0;
    }
  }

  /**
   * {@code healthy}, or {@code failing since <time>: <last error> (N consecutive failures, WAL
   * a..b pending)}, from the server's {@code GET /catalogs/{id}/tables/{uuid}/reconcile}; a
   * server that cannot tell says why instead of hiding it.
   */
  static String reconcileStatus(HttpApi api, String catalogId, String uuid) {
    java.net.http.HttpResponse<String> response;
    try {
      response = api.send("GET", "/catalogs/" + catalogId + "/tables/" + uuid + "/reconcile", null);
    } catch (SeException e) {
      return "unknown (" + e.getMessage() + ")";
    }
    if (response.statusCode() != 200) {
      return "unknown (the server answered HTTP " + response.statusCode() + ")";
    }
    try {
      return ReconcileStatus.fromJson(Json.parse(response.body().getBytes(
          java.nio.charset.StandardCharsets.UTF_8)), "from the server").describe();
    } catch (SeException e) {
      return "unknown (" + e.getMessage() + ")";
    }
  }

  @Command(name = "drop", mixinStandardHelpOptions = true, description = "Drop a table from its catalog.")
  static final class Drop extends Base {
    @Option(names = "--purge", description = "Also delete its data and metadata files")
    boolean purge;

    @Override
    int run(RESTCatalog catalog, TableIdentifier ident) {
      if (!catalog.dropTable(ident, purge)) {
        throw SeException.notFound("table '%s' not found in catalog '%s'", ident, catalogId);
      }
      System.out.println("dropped " + ident);
      return 0;
    }
  }

}
