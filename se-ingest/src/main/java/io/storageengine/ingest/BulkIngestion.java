package io.storageengine.ingest;

import io.grpc.ServerCall;
import io.storageengine.catalog.TableLocationPolicy;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.wal.ProducerStamp;
import io.storageengine.wal.WalOperation;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.flight.sql.impl.FlightSql.DoPutUpdateResult;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Flight SQL bulk ingest (ARCHITECTURE.md 6.2), what ADBC's {@code adbc_ingest} sends:
 * {@code catalog} is the tenant id, {@code schema} the dot-separated namespace. If the table
 * does not exist, {@code if_not_exist = CREATE} creates an append table (format v3) from the
 * Arrow schema, anything else is NOT_FOUND. If it exists, {@code APPEND} appends, {@code REPLACE}
 * is refused (ingestion never drops data) and anything else is ALREADY_EXISTS. The update count
 * is sent once every row is durable. Read without a thread of its own as {@link PushIngestion}
 * describes: the command is checked when the call opens, the table resolved (or created) when
 * the schema arrives, then every batch with rows is submitted; {@code app_metadata} is ignored.
 *
 * <p>Idempotent statements: options {@code se.producer-id} and {@code se.sequence} (both or
 * neither) make batch i (from 0) of the statement the write ({@code producer}, {@code sequence
 * + i}), as a native stream's batch with that sequence: a resent statement (same batches in the
 * same order) writes only the batches not durable yet, and its update count counts every row.
 * The next statement of the producer numbers its batches after this one's.
 */
final class BulkIngestion extends PushIngestion {
  /** Option: {@code upsert} (default) or {@code delete}. */
  static final String OPERATION_OPTION = "se.operation";
  /** Option: the producer id of an idempotent statement. */
  static final String PRODUCER_OPTION = "se.producer-id";
  /** Option: the sequence of the statement's first batch (a non-negative integer). */
  static final String SEQUENCE_OPTION = "se.sequence";

  private final CommandStatementIngest command;
  private final WalOperation operation;
  private final TableIdentifier identifier;
  private final AtomicLong durableRows = new AtomicLong();
  /** The statement's producer id (null: not idempotent) and the sequence of its first batch. */
  private final String producerId;
  private final long firstSequence;
  private BatchValidator validator;
  private Duration producerRetention;
  private long batch;
  private long submittedRows;

  private BulkIngestion(IngestService service, ServerCall<byte[], byte[]> call,
      CommandStatementIngest command, WalOperation operation, TableIdentifier identifier,
      String name) {
    super(service, call, name, false);
    this.command = command;
    this.operation = operation;
    this.identifier = identifier;
    this.producerId = command.getOptionsMap().get(PRODUCER_OPTION);
    this.firstSequence = sequenceOption(command, producerId);
  }

  /** A bulk ingest of {@code command} on {@code call}; throws if the command is not accepted. */
  static BulkIngestion open(IngestService service, ServerCall<byte[], byte[]> call,
      CommandStatementIngest command, String name) {
    WalOperation operation = checkCommand(command);
    TableIdentifier identifier = identifier(command);
    return new BulkIngestion(service, call, command, operation, identifier, name);
  }

  @Override
  void schemaArrived(Schema schema, DictionaryProvider dictionaries) {
    String catalogId = command.getCatalog();
    Table table = resolveTable(catalogId, identifier, schema);
    IngestTarget target = TableResolver.target(catalogId, identifier, table, operation);
    BatchValidator forStream = BatchValidator.forStream(target, schema, dictionaries);
    service.committer(target);
    if (producerId != null) {
      producerRetention = IdempotentBatches.open(service, target, table, producerId);
    }
    validator = forStream;
    admitted();
  }

  @Override
  void message(int rows, byte[] appMetadata) {
    if (rows == 0) {
      return;
    }
    batch++;
    submittedRows += rows;
    ProducerStamp stamp = null;
    if (producerId != null) {
      long sequence = firstSequence + batch - 1;
      if (service.producers().isDurable(validator.target().wal(), producerId, sequence,
          producerRetention)) {
        skipLoaded();
        durableRows.addAndGet(rows); // written by an earlier attempt of the statement
        return;
      }
      stamp = new ProducerStamp(producerId, sequence, System.currentTimeMillis());
    }
    submit(validator, batch, "batch " + batch, () -> durableRows.addAndGet(rows), stamp,
        producerRetention);
  }

  @Override
  void succeeded() {
    // Every submitted batch settled without failure, so every row is durable.
    assert durableRows.get() == submittedRows;
    call.send(DoPutUpdateResult.newBuilder().setRecordCount(submittedRows).build().toByteArray());
  }

  private static WalOperation checkCommand(CommandStatementIngest command) {
    if (!command.hasCatalog() || command.getCatalog().isEmpty()) {
      throw SeException.invalid("catalog: required, the tenant (catalog) id");
    }
    if (command.getTable().isEmpty()) {
      throw SeException.invalid("table: required");
    }
    if (command.getTemporary()) {
      throw new SeException(ErrorCode.UNSUPPORTED, "temporary: temporary tables are not supported");
    }
    if (command.hasTransactionId()) {
      throw new SeException(ErrorCode.UNSUPPORTED, "transaction_id: transactions are not supported");
    }
    WalOperation operation = WalOperation.UPSERT;
    for (Map.Entry<String, String> option : command.getOptionsMap().entrySet()) {
      switch (option.getKey()) {
        case OPERATION_OPTION ->
            operation = IngestProtocol.parseOperation(option.getValue(), "option `se.operation`");
        case PRODUCER_OPTION ->
            ProducerStamp.checkProducerId(option.getValue(), "option `" + PRODUCER_OPTION + "`");
        case SEQUENCE_OPTION -> { } // checked with the producer id
        default -> throw SeException.invalid("options: unknown option `%s`", option.getKey());
      }
    }
    sequenceOption(command, command.getOptionsMap().get(PRODUCER_OPTION));
    return operation;
  }

  /** The statement's {@code se.sequence}: required with a producer id, refused without one. */
  private static long sequenceOption(CommandStatementIngest command, String producerId) {
    String value = command.getOptionsMap().get(SEQUENCE_OPTION);
    if (producerId == null) {
      if (value != null) {
        throw SeException.invalid("option `%s` needs option `%s`", SEQUENCE_OPTION, PRODUCER_OPTION);
      }
      return -1;
    }
    if (value == null) {
      throw SeException.invalid("option `%s`: required with option `%s`", SEQUENCE_OPTION,
          PRODUCER_OPTION);
    }
    long sequence;
    try {
      sequence = Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      throw SeException.invalid("option `%s` must be an integer, got `%s`", SEQUENCE_OPTION, value);
    }
    if (sequence < 0) {
      throw SeException.invalid("option `%s` must be >= 0, got %d", SEQUENCE_OPTION, sequence);
    }
    return sequence;
  }

  /**
   * The target table. {@code schema} is the dot-separated namespace and is required (a table
   * outside every namespace could not be queried); names are names, never paths
   * ({@link TableLocationPolicy#checkIdentifier}).
   */
  private static TableIdentifier identifier(CommandStatementIngest command) {
    String schema = command.hasSchema() ? command.getSchema() : "";
    if (schema.isEmpty()) {
      throw SeException.invalid("schema: required, the table's namespace (e.g. `analytics` or `analytics.events`)");
    }
    Namespace namespace = Namespace.of(schema.split("\\.", -1));
    for (String level : namespace.levels()) {
      if (level.isEmpty()) {
        throw SeException.invalid("schema: `%s` has an empty namespace level", schema);
      }
    }
    TableIdentifier identifier = TableIdentifier.of(namespace, command.getTable());
    try {
      TableLocationPolicy.checkIdentifier(identifier);
    } catch (SeException e) {
      throw SeException.invalid("bulk ingest target: %s", e.getMessage());
    }
    return identifier;
  }

  private Table resolveTable(String catalogId, TableIdentifier identifier, Schema schema) {
    TableDefinitionOptions options = command.getTableDefinitionOptions();
    Optional<Table> existing = service.resolver().find(catalogId, identifier);
    if (existing.isEmpty()) {
      if (options.getIfNotExist() != TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE) {
        throw SeException.notFound("table `%s` not found in catalog `%s` (table_definition_options"
            + ".if_not_exist is not CREATE)", identifier, catalogId);
      }
      Optional<Table> created = service.resolver().createAppendTable(catalogId, identifier, schema);
      if (created.isPresent()) {
        return created.get();
      }
      // Another writer created it between our lookup and our create: it exists now.
      existing = Optional.of(service.resolver().load(catalogId, identifier));
    }
    switch (options.getIfExists()) {
      case TABLE_EXISTS_OPTION_APPEND:
        return existing.get();
      case TABLE_EXISTS_OPTION_REPLACE:
        throw new SeException(ErrorCode.UNSUPPORTED, "table_definition_options.if_exists: REPLACE "
            + "is not supported, ingestion never drops a table's data");
      default:
        throw new SeException(ErrorCode.ALREADY_EXISTS, String.format("table `%s` already exists "
            + "in catalog `%s` (table_definition_options.if_exists is not APPEND)", identifier,
            catalogId));
    }
  }
}
