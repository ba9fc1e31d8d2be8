package io.storageengine.reconcile;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.encryption.EncryptionManager;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;

/** Hand-written catalog fakes for failure tests. */
final class TestingCatalogs {
  private TestingCatalogs() {}

  /** A catalog that answers "no such table" for every table, like a misconfigured one. */
  static final class Empty implements Catalog {
    @Override public String name() { return "empty"; }
    @Override public List<TableIdentifier> listTables(Namespace namespace) { return List.of(); }
    @Override public Table loadTable(TableIdentifier identifier) {
      throw new NoSuchTableException("Table does not exist: %s", identifier);
    }
    @Override public boolean dropTable(TableIdentifier identifier, boolean purge) { return false; }
    @Override public void renameTable(TableIdentifier from, TableIdentifier to) {
      throw new NoSuchTableException("Table does not exist: %s", from);
    }
  }

  /** A catalog whose backend cannot be reached: every call fails like a refused connection. */
  static final class Unreachable implements Catalog {
    private RuntimeException down() {
      return new RuntimeException("connection refused: catalog backend");
    }

    @Override public String name() { return "unreachable"; }
    @Override public List<TableIdentifier> listTables(Namespace namespace) { throw down(); }
    @Override public Table loadTable(TableIdentifier identifier) { throw down(); }
    @Override public boolean dropTable(TableIdentifier identifier, boolean purge) { throw down(); }
    @Override public void renameTable(TableIdentifier from, TableIdentifier to) { throw down(); }
    @Override public Table createTable(TableIdentifier identifier, Schema schema) { throw down(); }
  }

  /**
   * Delegates to a real catalog, but the first {@code losses} commits of loaded tables succeed
   * and then report {@link CommitStateUnknownException}, as when the response is lost.
   */
  static final class LosingCommitResponses implements Catalog {
    private final Catalog delegate;
    private final AtomicInteger losses;

    LosingCommitResponses(Catalog delegate, int losses) {
      this.delegate = delegate;
      this.losses = new AtomicInteger(losses);
    }

    @Override public String name() { return delegate.name(); }
    @Override public List<TableIdentifier> listTables(Namespace namespace) { return delegate.listTables(namespace); }
    @Override public boolean dropTable(TableIdentifier identifier, boolean purge) { return delegate.dropTable(identifier, purge); }
    @Override public void renameTable(TableIdentifier from, TableIdentifier to) { delegate.renameTable(from, to); }

    @Override
    public Table loadTable(TableIdentifier identifier) {
      Table table = delegate.loadTable(identifier);
      TableOperations ops = ((HasTableOperations) table).operations();
      return new BaseTable(new LosingOps(ops, losses), table.name());
    }

    @Override
    public void initialize(String name, Map<String, String> properties) {}
  }

  private static final class LosingOps implements TableOperations {
    private final TableOperations delegate;
    private final AtomicInteger losses;

    LosingOps(TableOperations delegate, AtomicInteger losses) {
      this.delegate = delegate;
      this.losses = losses;
    }

    @Override public TableMetadata current() { return delegate.current(); }
    @Override public TableMetadata refresh() { return delegate.refresh(); }
    @Override public FileIO io() { return delegate.io(); }
    @Override public EncryptionManager encryption() { return delegate.encryption(); }
    @Override public String metadataFileLocation(String fileName) { return delegate.metadataFileLocation(fileName); }
    @Override public LocationProvider locationProvider() { return delegate.locationProvider(); }
    @Override public long newSnapshotId() { return delegate.newSnapshotId(); }
    @Override public TableOperations temp(TableMetadata uncommittedMetadata) { return delegate.temp(uncommittedMetadata); }
    @Override public boolean requireStrictCleanup() { return delegate.requireStrictCleanup(); }

    @Override
    public void commit(TableMetadata base, TableMetadata metadata) {
      delegate.commit(base, metadata);
      if (losses.getAndDecrement() > 0) {
        throw new CommitStateUnknownException(new RuntimeException("response lost"));
      }
    }
  }
}
