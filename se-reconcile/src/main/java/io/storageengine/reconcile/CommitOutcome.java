package io.storageengine.reconcile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.encryption.EncryptionManager;
import org.apache.iceberg.exceptions.CleanableFailure;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a failed commit means for the files it would have added. Iceberg's rule (the one its own
 * {@code SnapshotProducer} follows): only a {@link CleanableFailure} (a conflict, a failed
 * validation, a refused request) is known not to have committed. Any other exception, such as
 * {@code CommitStateUnknownException}, a lost HTTP response or a JDBC connection dropped after
 * the update ran, may hide a commit that landed: its files must not be deleted until the
 * reloaded table shows they are not referenced. Even a cleanable failure is checked against the
 * table before deleting, since a client that retries a commit which had landed sees a conflict
 * with its own commit.
 */
public final class CommitOutcome {
  private static final Logger LOG = LoggerFactory.getLogger(CommitOutcome.class);
  /** Snapshots walked back from the current one when looking for a commit's files. */
  static final int MAX_SNAPSHOTS_SEARCHED = 1_000;

  private CommitOutcome() {}

  /** True when Iceberg guarantees {@code failure} did not commit. */
  public static boolean cleanable(RuntimeException failure) {
    return failure instanceof CleanableFailure;
  }

  /**
   * True when a snapshot of the current lineage of {@code table} (as loaded; refresh it first)
   * that is newer than {@code sinceSnapshotId} added any of the data or delete files at
   * {@code locations}: the commit that wrote them landed. {@code sinceSnapshotId} null walks to
   * the first snapshot. False when {@code locations} is empty.
   */
  public static boolean added(Table table, Long sinceSnapshotId, Collection<String> locations) {
    if (locations.isEmpty()) {
      return false;
    }
    Set<String> wanted = new HashSet<>(locations);
    Snapshot s = table.currentSnapshot();
    for (int walked = 0; s != null && walked < MAX_SNAPSHOTS_SEARCHED; walked++) {
      if (sinceSnapshotId != null && s.snapshotId() == sinceSnapshotId) {
        return false;
      }
      if (wroteAny(table, s, wanted)) {
        return true;
      }
      s = s.parentId() == null ? null : table.snapshot(s.parentId());
    }
    return false;
  }

  /**
   * True when a snapshot of the current lineage of {@code table} (as loaded; refresh it first)
   * that is newer than {@code sinceSnapshotId} (null: any) has {@code value} as its summary's
   * {@code key}: the commit that set it landed.
   */
  public static boolean summarized(Table table, Long sinceSnapshotId, String key, String value) {
    Snapshot s = table.currentSnapshot();
    for (int walked = 0; s != null && walked < MAX_SNAPSHOTS_SEARCHED; walked++) {
      if (sinceSnapshotId != null && s.snapshotId() == sinceSnapshotId) {
        return false;
      }
      if (s.summary() != null && value.equals(s.summary().get(key))) {
        return true;
      }
      s = s.parentId() == null ? null : table.snapshot(s.parentId());
    }
    return false;
  }

  /** True when a manifest {@code s} wrote references one of {@code wanted}. */
  private static boolean wroteAny(Table table, Snapshot s, Set<String> wanted) {
    FileIO io = table.io();
    for (ManifestFile m : s.allManifests(io)) {
      if (m.snapshotId() == null || m.snapshotId() != s.snapshotId()) {
        continue; // written by an earlier snapshot: cannot hold files this commit added
      }
      try (CloseableIterable<? extends ContentFile<?>> files = m.content() == ManifestContent.DATA
          ? ManifestFiles.read(m, io, table.specs())
          : ManifestFiles.readDeleteManifest(m, io, table.specs())) {
        for (ContentFile<?> f : files) {
          if (wanted.contains(f.location())) {
            return true;
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return false;
  }

  /**
   * {@code table} for committing through: when the catalog fails a commit that adds a snapshot,
   * the table is refreshed and, if the snapshot is in it, the commit returns as succeeded. This
   * keeps Iceberg's client from acting on a failure of a commit that landed: retrying it (a
   * JDBC catalog's pool re-runs an update whose connection failed; the rerun matches nothing
   * and reports a conflict) and then, when the retry fails validation, deleting the manifest
   * list and manifests the landed snapshot references. A conflict whose table cannot be
   * refreshed becomes {@code CommitStateUnknownException}, so nothing is retried or deleted.
   * Tables that do not expose their operations are returned as they are.
   */
  public static Table checkingLanded(Table table) {
    if (!(table instanceof BaseTable base)) {
      return table;
    }
    return new BaseTable(new LandingCheckedOperations(base.operations(), base.name()), base.name(),
        base.reporter());
  }

  private static final class LandingCheckedOperations implements TableOperations {
    private final TableOperations delegate;
    private final String name;

    LandingCheckedOperations(TableOperations delegate, String name) {
      this.delegate = delegate;
      this.name = name;
    }

    @Override
    public void commit(TableMetadata base, TableMetadata metadata) {
      try {
        delegate.commit(base, metadata);
      } catch (RuntimeException e) {
        Snapshot committing = metadata.currentSnapshot();
        if (committing == null || (base != null && base.snapshot(committing.snapshotId()) != null)) {
          throw e; // no new snapshot to look for
        }
        TableMetadata now;
        try {
          now = delegate.refresh();
        } catch (RuntimeException refresh) {
          e.addSuppressed(refresh);
          if (e instanceof CommitFailedException) {
            throw new CommitStateUnknownException(e);
          }
          throw e;
        }
        if (now.snapshot(committing.snapshotId()) == null) {
          throw e;
        }
        LOG.warn("commit of snapshot {} to {} reported {} but landed", committing.snapshotId(), name,
            e.getClass().getSimpleName());
      }
    }

    @Override public TableMetadata current() { return delegate.current(); }
    @Override public TableMetadata refresh() { return delegate.refresh(); }
    @Override public FileIO io() { return delegate.io(); }
    @Override public EncryptionManager encryption() { return delegate.encryption(); }
    @Override public String metadataFileLocation(String fileName) { return delegate.metadataFileLocation(fileName); }
    @Override public LocationProvider locationProvider() { return delegate.locationProvider(); }
    @Override public TableOperations temp(TableMetadata uncommitted) { return delegate.temp(uncommitted); }
    @Override public long newSnapshotId() { return delegate.newSnapshotId(); }
    @Override public boolean requireStrictCleanup() { return delegate.requireStrictCleanup(); }
  }
}
