package io.storageengine.stress;

import io.storageengine.catalog.TableDefinition;
import io.storageengine.wal.WalOperation;
import java.util.List;
import java.util.Random;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * What producers write to one table and the exact model of what was acknowledged.
 *
 * <p>Producers call {@link #plan} to get the next batches, {@link #fill} to write one into an
 * Arrow root, {@link #sent} just before handing it to the stream, and then exactly one of
 * {@link #acked} (the server said it is durable) or {@link #unknown} (the ack never came, not
 * even after the producer resent it until it gave up at the end of the run). Producers ingest
 * idempotently and resend a batch until it is acknowledged, so verification demands exactly once
 * for every batch sent, acknowledged or not: its rows present once (append tables) or the
 * outcome of each key's last operation (entity tables). Batches that were planned but never sent
 * need no call and must not be stored. Every method is thread-safe.
 */
interface Workload {
  /** The table, e.g. {@code stress.append_0}. */
  TableIdentifier table();

  /** How the table is created by {@code --create-tables}. */
  TableDefinition definition();

  /** The streams a producer opens for this table (entity tables: upsert and delete). */
  List<WalOperation> operations();

  /** The Arrow schema of batches of {@code operation}. */
  Schema arrowSchema(WalOperation operation);

  /** The next batches for about {@code rows} operations (at most one per operation). */
  List<PlannedBatch> plan(int producer, int rows, Random random);

  /** Writes {@code batch} into {@code root}, whose schema is {@link #arrowSchema}. */
  void fill(PlannedBatch batch, VectorSchemaRoot root);

  void sent(PlannedBatch batch);

  void acked(PlannedBatch batch);

  void unknown(PlannedBatch batch);

  /** The probed column of the freshness probe: larger values are written later. */
  String freshnessColumn();

  /** Columns read back for verification. */
  List<String> readBackColumns();

  /** A fresh collector of read-back rows, compared with the model by {@link ReadBack#verify}. */
  ReadBack newReadBack();

  /** Rows read back through one reader. */
  interface ReadBack {
    /** Adds the rows of a Flight SQL result batch with the {@link #readBackColumns}. */
    void add(VectorSchemaRoot batch);

    /** Adds one row read with Iceberg's generic reader. */
    void add(org.apache.iceberg.data.Record row);

    TableVerification verify(String reader);
  }
}
