package io.storageengine.common.telemetry;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.storageengine.common.SeException;
import java.util.List;
import java.util.Locale;

/**
 * The span names and attribute keys the engine uses, in one place so that dashboards and tests
 * name them the same way. Values are ids, names, counts and sizes only.
 */
public final class SpanFields {
  private SpanFields() {}

  // ---- span names ----
  public static final String FLIGHT_CALL = "flight.call";
  public static final String INGEST_BATCH = "ingest.batch";
  public static final String WAL_FLUSH = "wal.flush";
  public static final String RECONCILE_RUN = "reconcile.run";
  public static final String RECONCILE_MATERIALIZE = "reconcile.materialize";
  public static final String RECONCILE_COMMIT = "reconcile.commit";
  public static final String CATALOG_OPERATION = "catalog.operation";
  public static final String STORAGE_OPERATION = "storage.operation";

  // ---- shared ----
  /** True on a span whose operation failed. */
  public static final AttributeKey<Boolean> ERROR = AttributeKey.booleanKey("error");
  /** The failure's {@code ErrorCode} name in lower case, or the exception's simple class name. */
  public static final AttributeKey<String> ERROR_KIND = AttributeKey.stringKey("error.kind");
  public static final AttributeKey<String> CATALOG_ID = AttributeKey.stringKey("catalog.id");
  /** {@code namespace.table} as the client named it. */
  public static final AttributeKey<String> TABLE = AttributeKey.stringKey("table");
  public static final AttributeKey<String> TABLE_UUID = AttributeKey.stringKey("table.uuid");
  public static final AttributeKey<Long> ROWS = AttributeKey.longKey("rows");
  public static final AttributeKey<Long> BYTES = AttributeKey.longKey("bytes");

  // ---- Flight ----
  public static final AttributeKey<String> RPC_METHOD = AttributeKey.stringKey("rpc.method");
  /** What the call does: {@code ingest}, {@code bulk_ingest}, {@code query}, {@code metadata}, ... */
  public static final AttributeKey<String> FLIGHT_KIND = AttributeKey.stringKey("flight.kind");
  /** The Flight SQL command's type name ({@code CommandStatementQuery}), never its content. */
  public static final AttributeKey<String> FLIGHT_COMMAND = AttributeKey.stringKey("flight.command");
  public static final AttributeKey<String> RPC_STATUS = AttributeKey.stringKey("rpc.grpc.status");
  public static final AttributeKey<Long> REQUEST_MESSAGES = AttributeKey.longKey("rpc.request.messages");
  public static final AttributeKey<Long> RESPONSE_MESSAGES = AttributeKey.longKey("rpc.response.messages");
  public static final AttributeKey<Long> QUERY_LENGTH = AttributeKey.longKey("query.length");
  public static final AttributeKey<String> FILTER_CATALOG = AttributeKey.stringKey("filter.catalog");
  public static final AttributeKey<String> FILTER_SCHEMA = AttributeKey.stringKey("filter.db_schema");
  public static final AttributeKey<String> FILTER_TABLE = AttributeKey.stringKey("filter.table_name");
  public static final AttributeKey<List<String>> FILTER_TABLE_TYPES = AttributeKey.stringArrayKey("filter.table_types");
  public static final AttributeKey<String> INGEST_OPERATION = AttributeKey.stringKey("ingest.operation");
  public static final AttributeKey<List<Long>> REQUEST_IDS = AttributeKey.longArrayKey("ingest.request_ids");
  public static final AttributeKey<Long> REQUEST_ID = AttributeKey.longKey("ingest.request_id");
  public static final AttributeKey<Long> REQUEST_ID_COUNT = AttributeKey.longKey("ingest.request_id.count");

  // ---- WAL / reconcile ----
  public static final AttributeKey<Long> SEGMENT_SEQ = AttributeKey.longKey("wal.seq");
  public static final AttributeKey<Long> FRAMES = AttributeKey.longKey("wal.frames");
  public static final AttributeKey<Long> WAL_FROM = AttributeKey.longKey("wal.from_seq");
  public static final AttributeKey<Long> WAL_TO = AttributeKey.longKey("wal.to_seq");
  /** The slice a reconcile pass is for, on a sliced table. */
  public static final AttributeKey<Long> SLICE = AttributeKey.longKey("slice");
  public static final AttributeKey<Long> FILES = AttributeKey.longKey("files");
  public static final AttributeKey<Long> DELETION_VECTORS = AttributeKey.longKey("deletion_vectors");
  public static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("outcome");
  public static final AttributeKey<Long> TABLES = AttributeKey.longKey("tables");

  // ---- catalog ----
  public static final AttributeKey<String> CATALOG_OPERATION_NAME = AttributeKey.stringKey("catalog.operation");
  public static final AttributeKey<Long> CATALOG_RESULT_COUNT = AttributeKey.longKey("catalog.result_count");

  // ---- object store ----
  public static final AttributeKey<String> IO_OPERATION = AttributeKey.stringKey("io.operation");
  public static final AttributeKey<String> IO_BUCKET = AttributeKey.stringKey("io.bucket");
  public static final AttributeKey<String> IO_ROOT = AttributeKey.stringKey("io.root");
  public static final AttributeKey<String> IO_PATH = AttributeKey.stringKey("io.path");
  public static final AttributeKey<Long> IO_RETRY_COUNT = AttributeKey.longKey("io.retry_count");
  public static final AttributeKey<String> IO_RETRY_ERROR_KIND = AttributeKey.stringKey("io.retry_error_kind");
  public static final AttributeKey<Long> IO_SIZE = AttributeKey.longKey("io.size");
  /** For conditional puts: whether the condition held and the write happened. */
  public static final AttributeKey<Boolean> IO_CONDITION_MET = AttributeKey.booleanKey("io.condition_met");
  public static final AttributeKey<Long> IO_RESULT_COUNT = AttributeKey.longKey("io.result_count");

  /** {@code ErrorCode} name of an {@link SeException} in lower case, else the simple class name. */
  public static String errorKind(Throwable failure) {
    if (failure instanceof SeException se) {
      return se.code().name().toLowerCase(Locale.ROOT);
    }
    return failure.getClass().getSimpleName();
  }

  /**
   * Marks {@code span} failed with the failure's kind. The message is deliberately not recorded:
   * it may quote user input (a SQL fragment, a property value).
   */
  public static void fail(Span span, Throwable failure) {
    String kind = errorKind(failure);
    span.setAttribute(ERROR, true);
    span.setAttribute(ERROR_KIND, kind);
    span.setStatus(StatusCode.ERROR, kind);
  }
}
