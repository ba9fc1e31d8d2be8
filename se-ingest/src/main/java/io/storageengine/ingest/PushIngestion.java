package io.storageengine.ingest;

import io.grpc.ServerCall;
import io.grpc.Status;
import io.opentelemetry.context.Context;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.FlightErrors;
import io.storageengine.common.SeException;
import io.storageengine.wal.ProducerStamp;
import java.time.Duration;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.AutoCloseables;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.MetadataVersion;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.DictionaryUtility;
import org.apache.arrow.vector.validate.MetadataV4UnionChecker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One ingest DoPut read without a thread of its own, whatever its protocol: the native protocol
 * ({@link NativeIngestion}) and Flight SQL bulk ingest ({@link BulkIngestion}) each say what
 * their messages mean ({@link #schemaArrived}, {@link #message}, {@link #inputFinished},
 * {@link #succeeded}); this class decodes them, holds the flow control and ends the call.
 *
 * <p>Driven by the messages as gRPC delivers them: each {@code FlightData} message is decoded
 * with Arrow's IPC classes into the stream's input allocator, validated, converted and
 * submitted to the table's group commit, and the next
 * message is requested only while the stream has room (fewer than the unacknowledged batch and
 * byte limits) and the global budget granted the last batch's bytes. Acks are sent from the
 * flush threads as segments become durable; nothing waits for them.
 *
 * <p>However the stream ends (client finished, invalid input, storage failure, cancellation),
 * it ends the call only once every submitted batch settled, so acks of durable batches reach
 * the client before the final status. Arrow memory is touched only by one listener callback at
 * a time, or by the end of the stream once no callback runs; the end closes it, and memory left
 * behind is a bug reported INTERNAL.
 */
abstract class PushIngestion extends ServerCall.Listener<byte[]> {
  private static final Logger LOG = LoggerFactory.getLogger(PushIngestion.class);

  final IngestService service;
  /** Where the protocol sends its PutResults; the end of the call is this class's. */
  final PutCall call;
  private final String name;
  private final int maxBatches;
  private final long maxBytes;

  // The input side: used only by a listener callback, or by the end of the stream.
  private final BufferAllocator allocator;
  private final BufferAllocator input;
  private final DictionaryProvider.MapDictionaryProvider dictionaries =
      new DictionaryProvider.MapDictionaryProvider();
  private final List<byte[]> early = new ArrayList<>();
  private Schema schema;
  private short metadataVersion;
  private VectorSchemaRoot root;
  private VectorLoader loader;

  // Guarded by this.
  /** Submits {@link #waiting} once the global budget granted its bytes; the identity to cancel. */
  private Runnable grant;
  /** Messages asked for and not received yet: never more than one beyond the one in hand. */
  private int requested = 1;
  private int batches;
  private long bytes;
  private Waiting waiting;
  private boolean wantsMessage;
  private boolean inputEnded;
  private boolean inCallback;
  private boolean ended;
  private Throwable failure;
  /** Until the protocol resolved the stream's table ({@link #admitted}) or the stream ended. */
  private final AtomicBoolean inAdmission = new AtomicBoolean(true);

  /**
   * @param requestSecond also asks for the message after the one the router holds: a protocol
   *     whose second message is a header that holds no budget takes no round trip between them
   */
  PushIngestion(IngestService service, ServerCall<byte[], byte[]> call, String name,
      boolean requestSecond) {
    this.service = service;
    this.call = new PutCall(call);
    this.name = name;
    IngestConfig config = service.config();
    this.maxBatches = config.maxUnacknowledgedBatches();
    this.maxBytes = config.maxStreamBytes();
    this.allocator = service.streamAllocator(name);
    BufferAllocator in;
    try {
      in = service.inputAllocator(name);
    } catch (RuntimeException e) {
      allocator.close();
      throw e;
    }
    this.input = in;
    if (requestSecond) {
      requested++;
      this.call.request();
    }
    service.admissions().opened();
  }

  /**
   * The stream's table is resolved: it leaves admission ({@link AdmissionTracker}); the end of
   * the stream calls this too, and only the first call counts.
   */
  final void admitted() {
    if (inAdmission.compareAndSet(true, false)) {
      service.admissions().admitted();
    }
  }

  /**
   * The stream's schema arrived (dictionary-encoded fields in memory format, their dictionaries
   * in {@code dictionaries}, filled by later dictionary batches).
   */
  abstract void schemaArrived(Schema schema, DictionaryProvider dictionaries);

  /**
   * The next message after the schema: a record batch of {@code rows} rows, loaded in the
   * stream's root until this returns, or a message without data ({@code rows} 0); its
   * {@code app_metadata}, null when absent. Metadata-only messages sent before the schema come
   * here, in order, right after {@link #schemaArrived}.
   */
  abstract void message(int rows, byte[] appMetadata);

  /** The client finished sending after the schema; throw to fail the stream. */
  void inputFinished() {}

  /** Every submitted batch is durable and the input ended: send what precedes the OK status. */
  void succeeded() {}

  @Override
  public void onMessage(byte[] message) {
    if (!enter(true)) {
      return;
    }
    try {
      receive(PutMessage.parse(message));
    } catch (Throwable t) {
      fail(t);
    } finally {
      leave();
    }
  }

  @Override
  public void onHalfClose() {
    if (!enter(false)) {
      return;
    }
    try {
      if (schema == null) {
        throw SeException.invalid("stream: the stream ended before its schema");
      }
      inputFinished();
    } catch (Throwable t) {
      fail(t);
    } finally {
      synchronized (this) {
        inputEnded = true;
      }
      leave();
    }
  }

  @Override
  public void onCancel() {
    fail(CallStatus.CANCELLED.withDescription("the client cancelled the stream")
        .toRuntimeException());
  }

  private void receive(PutMessage message) throws IOException {
    byte[] header = message.header();
    if (header == null) {
      metadata(message.appMetadata());
      return;
    }
    Message ipc;
    try {
      ipc = Message.getRootAsMessage(ByteBuffer.wrap(header));
    } catch (RuntimeException e) {
      throw SeException.invalid("DoPut: data_header is not an Arrow IPC message");
    }
    switch (ipc.headerType()) {
      case MessageHeader.NONE -> metadata(message.appMetadata());
      case MessageHeader.Schema -> schema(ipc);
      case MessageHeader.RecordBatch -> {
        checkVersion(ipc, "record batch");
        root.clear();
        RecordBatch batchHeader = (RecordBatch) ipc.header(new RecordBatch());
        try (ArrowBuf body = message.body(input);
            ArrowRecordBatch batch =
                decode(body, b -> MessageSerializer.deserializeRecordBatch(batchHeader, b))) {
          loader.load(batch);
        }
        message(root.getRowCount(), message.appMetadata());
      }
      case MessageHeader.DictionaryBatch -> {
        checkVersion(ipc, "dictionary batch");
        root.clear();
        try (ArrowBuf body = message.body(input);
            ArrowDictionaryBatch batch =
                decode(body, b -> MessageSerializer.deserializeDictionaryBatch(ipc, b))) {
          Dictionary dictionary = dictionaries.lookup(batch.getDictionaryId());
          if (dictionary == null) {
            throw SeException.invalid("dictionary batch for id %d, which the schema does not "
                + "define", batch.getDictionaryId());
          }
          FieldVector vector = dictionary.getVector();
          new VectorLoader(new VectorSchemaRoot(List.of(vector.getField()), List.of(vector), 0))
              .load(batch.getDictionary());
        }
      }
      default -> throw SeException.invalid("DoPut: IPC message type %d is not accepted (schema, "
          + "record batch or dictionary batch)", ipc.headerType());
    }
  }

  private interface Decoder<T> {
    T decode(ArrowBuf body) throws IOException;
  }

  /**
   * Decodes a batch whose buffers are slices of {@code body}. Arrow's deserializer takes one
   * reference of the body (as Flight's own decoding does, it gets one of its own); the caller
   * keeps and closes its reference.
   */
  private static <T> T decode(ArrowBuf body, Decoder<T> decoder) {
    body.getReferenceManager().retain();
    try {
      return decoder.decode(body);
    } catch (IOException e) {
      body.getReferenceManager().release();
      throw SeException.invalid("DoPut: %s", e.getMessage());
    } catch (RuntimeException e) {
      body.getReferenceManager().release();
      throw e;
    }
  }

  /** A message without data: the header, a batch's metadata alone, or nothing at all. */
  private void metadata(byte[] appMetadata) {
    if (appMetadata == null) {
      return; // e.g. the descriptor alone
    }
    if (schema == null) {
      early.add(appMetadata); // read, in order, once the schema arrived
      return;
    }
    root.clear();
    message(0, appMetadata);
  }

  private void schema(Message ipc) throws IOException {
    if (schema != null) {
      throw SeException.invalid("a second schema message: a stream has one schema, sent first; "
          + "send batches of another schema in a new stream");
    }
    Schema wire = MessageSerializer.deserializeSchema(ipc);
    List<Field> fields = new ArrayList<>();
    Map<Long, Dictionary> found = new HashMap<>();
    try {
      for (Field field : wire.getFields()) {
        fields.add(DictionaryUtility.toMemoryFormat(field, input, found));
      }
    } finally {
      found.values().forEach(dictionaries::put); // closed with the stream, also on failure
    }
    Schema memory = new Schema(fields, wire.getCustomMetadata());
    metadataVersion = ipc.version();
    checkUnions(memory, metadataVersion);
    root = VectorSchemaRoot.create(memory, input);
    loader = new VectorLoader(root);
    schema = memory;
    schemaArrived(schema, dictionaries);
    // Arrow Java drops a schema message's app_metadata; a protocol's header is the next message.
    for (byte[] metadata : early) {
      message(0, metadata);
    }
    early.clear();
  }

  private void checkVersion(Message ipc, String what) {
    if (schema == null) {
      throw SeException.invalid("%s before the stream's schema", what);
    }
    if (ipc.version() != metadataVersion) {
      throw SeException.invalid("%s: IPC metadata version %d, the schema's was %d", what,
          ipc.version(), metadataVersion);
    }
  }

  /**
   * Validates and converts the batch now loaded in the root (INVALID_ARGUMENT prefixed with
   * {@code label}), then submits it to the table's group commit once the stream has room and
   * the global budget granted its bytes; {@code onDurable} runs when its segment is durable.
   * Only from {@link #message}; the next message is requested once the batch is granted.
   */
  final void submit(BatchValidator validator, long requestId, String label, Runnable onDurable) {
    submit(validator, requestId, label, onDurable, null, null);
  }

  /**
   * As {@link #submit(BatchValidator, long, String, Runnable)}, the batch being the idempotent
   * write {@code producer} (null: a plain one) of a table whose producers are forgotten after
   * {@code producerRetention}.
   */
  final void submit(BatchValidator validator, long requestId, String label, Runnable onDurable,
      ProducerStamp producer, Duration producerRetention) {
    BatchIntake.Prepared batch = BatchIntake.prepare(service, validator, root, dictionaries,
        allocator, requestId, label);
    if (producer != null) {
      batch = batch.withProducer(producer, producerRetention);
    }
    root.clear(); // the batch lives on as IPC bytes
    long size = batch.ipc().length;
    if (size > maxBytes) {
      throw new SeException(ErrorCode.RESOURCE_EXHAUSTED, String.format(
          "batch of %d bytes exceeds the per-stream limit of %d bytes: send smaller batches",
          size, maxBytes));
    }
    Runnable granting;
    synchronized (this) {
      if (waiting != null) {
        // Never: a message is requested only once the waiting batch was granted.
        throw new IllegalStateException("a batch arrived while the previous one waits for room");
      }
      waiting = new Waiting(batch, onDurable);
      // Granted later on a releasing (flush) thread: keep this call's span the batch's parent.
      grant = granting = Context.current().wrap(this::granted);
    }
    boolean now;
    try {
      now = service.budget().acquireOrQueue(size, granting);
    } catch (RuntimeException e) {
      synchronized (this) {
        waiting = null;
      }
      throw e;
    }
    if (now) {
      granted();
    }
  }

  /** Drops the batch now loaded in the root unwritten (an idempotent write that is durable already). */
  final void skipLoaded() {
    root.clear();
  }

  /** A prepared batch waiting for the global budget, and what to run once it is durable. */
  private record Waiting(BatchIntake.Prepared batch, Runnable onDurable) {}

  /** The waiting batch holds its bytes of the global budget: submit it. */
  private void granted() {
    Waiting granted;
    BatchIntake.Prepared batch;
    boolean drop;
    synchronized (this) {
      granted = waiting;
      waiting = null;
      if (granted == null) {
        return;
      }
      batch = granted.batch();
      drop = failure != null;
      if (!drop) {
        batches++;
        bytes += batch.ipc().length;
      }
    }
    long size = batch.ipc().length;
    if (drop) {
      service.budget().release(size);
      finishIfDone();
      return;
    }
    try {
      BatchIntake.commit(service, batch, granted.onDurable(), this::fail, () -> settled(size));
    } catch (RuntimeException e) {
      fail(e);
    }
    requestIfRoom();
  }

  /** A submitted batch is acknowledged or failed. */
  private void settled(long size) {
    service.budget().release(size);
    synchronized (this) {
      batches--;
      bytes -= size;
    }
    requestIfRoom();
    finishIfDone();
  }

  /** Records the first failure; the stream ends once nothing of it is in flight. */
  private void fail(Throwable error) {
    Runnable queued;
    synchronized (this) {
      if (failure == null) {
        failure = error;
      }
      queued = waiting != null ? grant : null;
    }
    if (queued != null && service.budget().cancel(queued)) {
      synchronized (this) {
        waiting = null;
      }
    }
    finishIfDone();
  }

  /**
   * Starts a listener callback ({@code message}: for a received message); false if the stream
   * failed or ended, and the callback is dropped.
   */
  private synchronized boolean enter(boolean message) {
    if (message) {
      requested = Math.max(0, requested - 1);
    }
    if (ended || failure != null) {
      return false;
    }
    inCallback = true;
    return true;
  }

  private void leave() {
    synchronized (this) {
      inCallback = false;
      wantsMessage = !inputEnded;
    }
    requestIfRoom();
    finishIfDone();
  }

  /** Asks for the next message when one is wanted and the stream has room for it. */
  private void requestIfRoom() {
    synchronized (this) {
      if (!wantsMessage || requested > 0 || inCallback || waiting != null || failure != null
          || inputEnded || batches >= maxBatches || bytes >= maxBytes) {
        return;
      }
      wantsMessage = false;
      requested++;
    }
    call.request();
  }

  /** Ends the call once the input ended or failed and nothing is in flight. */
  private void finishIfDone() {
    synchronized (this) {
      if (ended || inCallback || batches > 0 || waiting != null
          || (failure == null && !inputEnded)) {
        return;
      }
      ended = true;
    }
    admitted();
    Throwable leak = releaseInput();
    Throwable result;
    synchronized (this) {
      if (failure == null) {
        failure = leak;
      }
      result = failure;
    }
    if (result == null) {
      succeeded();
      call.close(Status.OK);
    } else {
      LOG.debug("stream {} failed: {}", name, result.toString());
      call.close(FlightErrors.toGrpcStatus(result));
    }
  }

  /** Closes every Arrow buffer of the stream; returns INTERNAL if any was left behind. */
  private Throwable releaseInput() {
    List<AutoCloseable> closing = new ArrayList<>();
    if (root != null) {
      closing.add(root);
    }
    for (long id : dictionaries.getDictionaryIds()) {
      closing.add(dictionaries.lookup(id).getVector());
    }
    closing.add(input);
    closing.add(allocator);
    try {
      AutoCloseables.close(closing);
      return null;
    } catch (Exception e) {
      // Closing an allocator found leaked memory: a bug, never the client's fault.
      LOG.error("stream {} leaked Arrow memory", name, e);
      return new SeException(ErrorCode.INTERNAL, "internal error during ingestion");
    }
  }

  /** Arrow's own check that a V4 stream carries no unions, as the client's error. */
  private static void checkUnions(Schema schema, short version) {
    try {
      MetadataV4UnionChecker.checkRead(schema, MetadataVersion.fromFlatbufID(version));
    } catch (IOException e) {
      throw SeException.invalid("schema: %s", e.getMessage());
    }
  }
}
