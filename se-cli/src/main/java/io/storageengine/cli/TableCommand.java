package io.storageengine.cli;

import io.storageengine.catalog.TableDefinition;
import io.storageengine.catalog.TableDescription;
import io.storageengine.catalog.TableProperties;
import io.storageengine.catalog.TableSettings;
import io.storageengine.catalog.TableSlices;
import io.storageengine.reconcile.SliceMeta;
import io.storageengine.catalog.Tables;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.reconcile.ReconcileStatus;
import io.storageengine.common.SeException;
import io.storageengine.catalog.TableSpecParser;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.ReplaceSortOrder;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortDirection;
import org.apache.iceberg.SortField;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.UpdatePartitionSpec;
import org.apache.iceberg.UpdateProperties;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.Literal;
import java.util.concurrent.Callable;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code se table create|describe|alter|drop}, through the server's Iceberg REST facade. */
@Command(name = "table", mixinStandardHelpOptions = true, description = "Create, describe, alter and drop tables in a tenant catalog.",
    subcommands = {TableCommand.Create.class, TableCommand.Describe.class, TableCommand.Alter.class, TableCommand.Drop.class})
final class TableCommand {

  abstract static class Base implements Callable<Integer> {
    @Option(names = "--server-address", defaultValue = "http://127.0.0.1:7777", description = "Server (default ${DEFAULT-VALUE}).")
    String serverAddress;

    @CommandLine.Mixin
    TokenOption token;

    @CommandLine.Mixin
    TlsOption tls;

    @Option(names = "--catalog-id", required = true, description = "Tenant catalog id.")
    String catalogId;

    @Option(names = "--table", required = true, paramLabel = "NS.TABLE", description = "Table, e.g. analytics.events.page_views")
    String table;

    @Override
    public Integer call() throws Exception {
      TableIdentifier ident = Tables.parseIdentifier(table);
      try (RESTCatalog catalog = RemoteCatalog.open(serverAddress, catalogId, token.value(), tls.bundle())) {
        return run(catalog, ident);
      } catch (NoSuchTableException e) {
        throw SeException.notFound("table '%s' not found in catalog '%s'", ident, catalogId);
      } catch (org.apache.iceberg.exceptions.RESTException e) {
        throw new SeException(ErrorCode.UNAVAILABLE, TlsOption.tlsFailure(e)
            .map(ssl -> TlsOption.handshakeFailure(serverAddress, ssl))
            .orElse("server at " + serverAddress + ": " + e.getMessage()));
      }
    }

    abstract int run(RESTCatalog catalog, TableIdentifier ident);

    String reconcileStatus(String uuid) {
      return TableCommand.reconcileStatus(new HttpApi(serverAddress, token.value(), tls.trust()), catalogId, uuid);
    }

    /** The table's slices-meta from the server; empty when it has none or cannot be read. */
    java.util.Optional<SliceMeta.Layout> sliceLayout(String uuid) {
      try {
        java.net.http.HttpResponse<String> response = new HttpApi(serverAddress, token.value(), tls.trust())
            .send("GET", "/catalogs/" + catalogId + "/tables/" + uuid + "/slices", null);
        return response.statusCode() != 200 ? java.util.Optional.empty() : java.util.Optional.of(
            SliceMeta.parse(response.body().getBytes(java.nio.charset.StandardCharsets.UTF_8)));
      } catch (RuntimeException e) {
        return java.util.Optional.empty();
      }
    }
  }

  @Command(name = "create", mixinStandardHelpOptions = true, description = "Create a format v3 table.")
  static final class Create extends Base {
    @Option(names = "--schema", required = true, description = "Columns, e.g. 'id bigint not null, name string, ts timestamptz, tier int default 0'")
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

    @Option(names = "--property", paramLabel = "KEY=VALUE",
        description = "A table property, e.g. se.maintenance.min-input-files=10 (repeatable)")
    List<String> properties;

    @Option(names = "--slices", paramLabel = "N",
        description = "Entity tables: divide the key space into N hash slices reconciled independently "
            + "(se.slice.count; fixed at creation)")
    Integer slices;

    @Override
    int run(RESTCatalog catalog, TableIdentifier ident) {
      TableDefinition.Builder b = TableDefinition.builder(schema).mode(TableDefinition.Mode.parse(mode));
      for (String property : properties == null ? List.<String>of() : properties) {
        String[] kv = keyValue("--property", property);
        b.property(kv[0], kv[1]);
      }
      if (primaryKey != null) {
        b.primaryKey(primaryKey);
      }
      if (versionColumn != null) {
        b.versionColumn(versionColumn);
      }
      if (slices != null) {
        b.property(TableProperties.SLICE_COUNT, Integer.toString(slices));
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
      Table loaded = catalog.loadTable(ident);
      TableDescription d = Tables.describe(loaded);
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
      printSlices(loaded, sliceLayout(d.uuid()));
      System.out.println("columns:");
      for (Types.NestedField f : d.schema().columns()) {
        System.out.printf("  %-3d %-24s %s%s%n", f.fieldId(), f.name(), f.type(), f.isRequired() ? " not null" : "");
      }
      return 0;
    }
  }

  /**
   * A sliced entity table's slices as of its current snapshot: id, hash range, WAL progress, data
   * files and live rows (files and rows shown as - when the table's manifests cannot be read from
   * here). The ranges come from the table's slices-meta {@code layout} (splits and merges change
   * them); without it, the {@code se.slice.count} equal ranges the table was created with. A
   * pending split or merge is shown.
   */
  static void printSlices(Table table, java.util.Optional<SliceMeta.Layout> layout) {
    TableSettings settings = TableSettings.of(table);
    if (!settings.entity() || !settings.sliced()) {
      return;
    }
    List<TableSlices.Slice> slices = TableSlices.uniform(settings.sliceCount());
    if (layout.isPresent()) {
      try {
        slices = layout.get().asOf(TableSlices.marks(table, table.currentSnapshot()));
      } catch (RuntimeException e) {
        slices = layout.get().slices();
      }
    }
    List<TableSlices.SliceStats> stats;
    try {
      stats = TableSlices.stats(table, table.currentSnapshot(), slices);
    } catch (RuntimeException e) {
      stats = null;
    }
    java.util.Map<Integer, Long> marks = TableSlices.marks(table, table.currentSnapshot());
    System.out.println("slices:         " + slices.size() + " (by hash of the primary key)");
    System.out.printf("  %-4s %-19s %-10s %-8s %s%n", "id", "hash range", "wal seq", "files", "rows");
    for (int i = 0; i < slices.size(); i++) {
      TableSlices.Slice s = slices.get(i);
      String files = stats == null ? "-" : Integer.toString(stats.get(i).dataFiles());
      String rows = stats == null ? "-" : Long.toString(stats.get(i).rows());
      System.out.printf("  %-4d %-19s %-10d %-8s %s%n", s.id(), s.range(), marks.getOrDefault(s.id(), 0L), files,
          rows);
    }
    layout.flatMap(SliceMeta.Layout::pending).ifPresent(c -> System.out.println("  pending:      " + c));
  }

  /** {@code KEY=VALUE} split at the first '='; a clear error naming {@code option} otherwise. */
  static String[] keyValue(String option, String text) {
    int eq = text.indexOf('=');
    if (eq <= 0) {
      throw SeException.invalid("%s: expected KEY=VALUE, got '%s'", option, text);
    }
    return new String[] {text.substring(0, eq).trim(), text.substring(eq + 1)};
  }

  @Command(name = "alter", mixinStandardHelpOptions = true,
      description = {"Evolve a table: columns, properties, partition spec, sort order.",
          "Schema changes commit together, then properties, then the partition spec, then the sort order.",
          "  se table alter --catalog-id C --table ns.t --add-column 'note string' --widen-column 'n bigint'"})
  static final class Alter extends Base {
    @Option(names = "--add-column", paramLabel = "'NAME TYPE'", description = "Add a column, e.g. 'note string', 'tier int default 0' (existing rows read the default) or 'loc struct<lat: double, lon: double>' (repeatable)")
    List<String> addColumns = new ArrayList<>();

    @Option(names = "--rename-column", paramLabel = "OLD=NEW", description = "Rename a column (repeatable)")
    List<String> renameColumns = new ArrayList<>();

    @Option(names = "--drop-column", paramLabel = "NAME", description = "Drop a column (repeatable)")
    List<String> dropColumns = new ArrayList<>();

    @Option(names = "--widen-column", paramLabel = "'NAME TYPE'",
        description = "Promote a column's type: int to bigint, float to double, decimal(p,s) to decimal(p2,s) with p2 > p (repeatable)")
    List<String> widenColumns = new ArrayList<>();

    @Option(names = "--set-default", paramLabel = "NAME=VALUE",
        description = "Change a column's write default, the value rows written without it get, e.g. 'tier=5',"
            + " 's.a=''x''' (a struct field), 'tier=null' (none); rows already written keep theirs (repeatable)")
    List<String> setDefaults = new ArrayList<>();

    @Option(names = "--set-property", paramLabel = "KEY=VALUE", description = "Set a table property (repeatable)")
    List<String> setProperties = new ArrayList<>();

    @Option(names = "--unset-property", paramLabel = "KEY", description = "Remove a table property (repeatable)")
    List<String> unsetProperties = new ArrayList<>();

    @Option(names = "--partition-by", paramLabel = "SPEC", description = "New partition spec, e.g. 'day(ts), bucket(16, id)'; '' for unpartitioned")
    String partitionBy;

    @Option(names = "--sort-by", paramLabel = "ORDER", description = "New sort order, e.g. 'name, ts desc'; '' for unsorted")
    String sortBy;

    @Override
    int run(RESTCatalog catalog, TableIdentifier ident) {
      boolean schemaChange = !addColumns.isEmpty() || !renameColumns.isEmpty() || !dropColumns.isEmpty()
          || !widenColumns.isEmpty() || !setDefaults.isEmpty();
      if (!schemaChange && setProperties.isEmpty() && unsetProperties.isEmpty() && partitionBy == null && sortBy == null) {
        throw SeException.invalid("se table alter: nothing to change; give --add-column, --rename-column, --drop-column,"
            + " --widen-column, --set-default, --set-property, --unset-property, --partition-by or --sort-by");
      }
      Table table = catalog.loadTable(ident);
      List<String> done = new ArrayList<>();
      try {
        if (schemaChange) {
          UpdateSchema update = table.updateSchema();
          for (String column : addColumns) {
            Types.NestedField f = oneColumn("--add-column", column);
            if (f.isRequired() && f.initialDefault() == null) {
              throw SeException.invalid("--add-column '%s': a new column cannot be not null without a default"
                  + " (existing rows have no value for it); add it without 'not null' or give it a default", column);
            }
            // A default is both the initial default (the value of existing rows) and the write default.
            Literal<?> defaultValue = f.initialDefaultLiteral();
            if (f.isRequired()) {
              update.addRequiredColumn(f.name(), f.type(), defaultValue);
            } else {
              update.addColumn(f.name(), f.type(), defaultValue);
            }
            done.add("added column " + f.name() + " " + f.type()
                + (defaultValue == null ? "" : " default " + defaultValue));
          }
          for (String rename : renameColumns) {
            String[] kv = keyValue("--rename-column", rename);
            requireColumn(table.schema(), "--rename-column", kv[0]);
            update.renameColumn(kv[0], kv[1].trim());
            done.add("renamed column " + kv[0] + " to " + kv[1].trim());
          }
          for (String column : dropColumns) {
            requireColumn(table.schema(), "--drop-column", column);
            update.deleteColumn(column);
            done.add("dropped column " + column);
          }
          for (String column : widenColumns) {
            Types.NestedField f = oneColumn("--widen-column", column);
            requireColumn(table.schema(), "--widen-column", f.name());
            if (!f.type().isPrimitiveType()) {
              throw SeException.invalid("--widen-column '%s': only primitive types can be promoted", column);
            }
            update.updateColumn(f.name(), f.type().asPrimitiveType());
            done.add("widened column " + f.name() + " to " + f.type());
          }
          for (String change : setDefaults) {
            String[] kv = keyValue("--set-default", change);
            requireColumn(table.schema(), "--set-default", kv[0]);
            Types.NestedField f = table.schema().findField(kv[0]);
            if (!f.type().isPrimitiveType()) {
              throw SeException.invalid("--set-default %s: column %s of type %s cannot have a default (only primitive"
                  + " columns and struct fields can)", change, kv[0], f.type());
            }
            Literal<?> value;
            try {
              value = TableSpecParser.parseDefault(f.type(), kv[0], kv[1]);
            } catch (SeException e) {
              throw SeException.invalid("--set-default %s: %s", change, e.getMessage());
            }
            // Only the write default changes: the initial default is what rows written before the
            // column existed read, and it is fixed once the column is added (Iceberg v3).
            update.updateColumnDefault(kv[0], value);
            done.add("set the write default of " + kv[0] + " to " + (value == null ? "none" : value));
          }
          update.commit();
        }
        if (!setProperties.isEmpty() || !unsetProperties.isEmpty()) {
          UpdateProperties update = table.updateProperties();
          for (String property : setProperties) {
            String[] kv = keyValue("--set-property", property);
            update.set(kv[0], kv[1]);
            done.add("set " + kv[0] + "=" + kv[1]);
          }
          for (String key : unsetProperties) {
            if (!table.properties().containsKey(key)) {
              throw SeException.invalid("--unset-property %s: the table has no such property", key);
            }
            update.remove(key);
            done.add("unset " + key);
          }
          update.commit();
        }
        if (partitionBy != null) {
          PartitionSpec target = partitionBy.isBlank() ? PartitionSpec.unpartitioned()
              : TableSpecParser.parsePartitionSpec(table.schema(), partitionBy);
          UpdatePartitionSpec update = table.updateSpec();
          List<String> wanted = new ArrayList<>();
          for (PartitionField f : target.fields()) {
            wanted.add(table.schema().findColumnName(f.sourceId()) + "|" + f.transform());
          }
          List<String> existing = new ArrayList<>();
          for (PartitionField f : table.spec().fields()) {
            String key = table.schema().findColumnName(f.sourceId()) + "|" + f.transform();
            existing.add(key);
            if (!wanted.contains(key)) {
              update.removeField(f.name());
            }
          }
          for (PartitionField f : target.fields()) {
            String source = table.schema().findColumnName(f.sourceId());
            if (!existing.contains(source + "|" + f.transform())) {
              update.addField(Expressions.transform(source, f.transform()));
            }
          }
          update.commit();
          done.add("partitioned by " + (target.isUnpartitioned() ? "nothing" : target.fields().toString()));
        }
        if (sortBy != null) {
          SortOrder target = sortBy.isBlank() ? SortOrder.unsorted() : TableSpecParser.parseSortOrder(table.schema(), sortBy);
          ReplaceSortOrder update = table.replaceSortOrder();
          for (SortField f : target.fields()) {
            var term = Expressions.transform(table.schema().findColumnName(f.sourceId()), f.transform());
            if (f.direction() == SortDirection.ASC) {
              update.asc(term, f.nullOrder());
            } else {
              update.desc(term, f.nullOrder());
            }
          }
          update.commit();
          done.add("sorted by " + (target.isUnsorted() ? "nothing" : target.fields().toString()));
        }
      } catch (IllegalArgumentException | org.apache.iceberg.exceptions.ValidationException e) {
        String prefix = done.isEmpty() ? "" : " (committed before it: " + String.join("; ", done) + ")";
        throw SeException.invalid("se table alter %s: %s%s", ident, e.getMessage(), prefix);
      }
      for (String line : done) {
        System.out.println(ident + ": " + line);
      }
      return 0;
    }

    /** Parses {@code 'name type [not null] [default value]'} as one column. */
    private static Types.NestedField oneColumn(String option, String text) {
      Schema parsed;
      try {
        parsed = TableSpecParser.parseSchema(text);
      } catch (SeException e) {
        throw SeException.invalid("%s '%s': %s", option, text, e.getMessage());
      }
      if (parsed.columns().size() != 1) {
        throw SeException.invalid("%s '%s': expected one column 'NAME TYPE', got %d", option, text, parsed.columns().size());
      }
      return parsed.columns().get(0);
    }

    private static void requireColumn(Schema schema, String option, String name) {
      if (schema.findField(name) == null) {
        throw SeException.invalid("%s %s: the table has no column %s (columns: %s)", option, name, name,
            String.join(", ", schema.columns().stream().map(Types.NestedField::name).toList()));
      }
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
