package io.storageengine.wal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Ids;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.common.telemetry.SpanFields;
import io.storageengine.common.telemetry.Telemetry;
import io.storageengine.objectstore.ObjectStore;
import io.storageengine.objectstore.ObjectStore.ObjectInfo;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The WAL on an {@link ObjectStore}, with the exactly-once append protocol of ARCHITECTURE.md
 * 6.5. One instance per process (or per test actor) is enough for every table; it is
 * thread-safe. Its writer id must be unique among the writers of the cluster (host and pid, or a
 * random UUID): together with the per-append nonce it lets an append recognise its own segment
 * after a lost response.
 *
 * <p>Every store call is retried a bounded number of times on UNAVAILABLE; after that the
 * UNAVAILABLE propagates and nothing was acknowledged. A segment whose outcome stayed unknown
 * is left in place (never cleaned up on an unknown outcome): it is a valid segment that may be
 * reconciled, so a caller that retries such an append may write its rows twice.
 *
 * <p>The recycled-slot rule ({@code seq <= gc_seq} after the create means "delete and rewrite")
 * cannot tell a slot that was collected before our create from our own segment having been
 * reconciled, published and collected while this writer was stalled between its create and its
 * state read. The rule resolves that case towards a duplicate, never towards a loss; it needs a
 * stall longer than a whole reconciliation cycle.
 */
public final class ObjectStoreWal implements WalWriter, WalLog {
  public static final int DEFAULT_ATTEMPTS = 3;
  public static final Duration DEFAULT_BACKOFF = Duration.ofMillis(20);

  private static final Logger LOG = LoggerFactory.getLogger(ObjectStoreWal.class);
  private static final byte[] PENDING_MARKER = "{}".getBytes(StandardCharsets.UTF_8);
  private static final Pattern SEGMENT_NAME = Pattern.compile("(\\d{20})\\.seg");

  private final ObjectStore store;
  private final String writerId;
  private final StoreRetry retry;
  private final WalStateFile stateFile;
  private final ProducerWindowFile producerFile;
  /** Per table, the seq after this writer's last append: where the next one starts probing. */
  private final ConcurrentHashMap<TableWal, AtomicLong> nextSeqHints = new ConcurrentHashMap<>();
  private final Telemetry telemetry;
  private final WalBacklog backlog;

  /** A WAL reporting to {@link Telemetry#none()}, the sink of components without an engine (tools, tests). */
  public ObjectStoreWal(ObjectStore store, String writerId) {
    this(store, writerId, DEFAULT_ATTEMPTS, DEFAULT_BACKOFF);
  }

  /** A WAL reporting its flush spans and WAL metrics to {@code telemetry}. */
  public ObjectStoreWal(ObjectStore store, String writerId, Telemetry telemetry) {
    this(store, writerId, DEFAULT_ATTEMPTS, DEFAULT_BACKOFF, telemetry);
  }

  /**
   * @param attemptsPerCall how often one store call is tried when it fails with UNAVAILABLE
   * @param backoff pause after the first failed attempt; it grows linearly with the attempt
   */
  public ObjectStoreWal(
      ObjectStore store, String writerId, int attemptsPerCall, Duration backoff) {
    this(store, writerId, attemptsPerCall, backoff, Telemetry.none());
  }

  /**
   * @param attemptsPerCall how often one store call is tried when it fails with UNAVAILABLE
   * @param backoff pause after the first failed attempt; it grows linearly with the attempt
   * @param telemetry receives the {@code wal.flush} spans and the WAL flush, backlog and
   *     freshness metrics
   */
  public ObjectStoreWal(
      ObjectStore store, String writerId, int attemptsPerCall, Duration backoff, Telemetry telemetry) {
    this.telemetry = Objects.requireNonNull(telemetry, "telemetry");
    this.backlog = new WalBacklog(telemetry.metrics());
    this.store = Objects.requireNonNull(store, "store");
    // Rejects an id the segment header cannot hold now rather than at the first append.
    this.writerId = WalSegmentCodec.checkWriterId(writerId);
    this.retry = new StoreRetry(attemptsPerCall, backoff);
    this.stateFile = new WalStateFile(store, retry);
    this.producerFile = new ProducerWindowFile(store, retry);
  }

  public String writerId() {
    return writerId;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Reported as a {@code wal.flush} span (catalog, table UUID, frames, rows, bytes, the
   * segment's seq) and in the WAL flush and backlog metrics.
   */
  @Override
  public long append(TableWal table, List<WalFrame> frames) {
    Objects.requireNonNull(table, "table");
    long start = System.nanoTime();
    Span span = telemetry.tracer().spanBuilder(SpanFields.WAL_FLUSH)
        .setAttribute(SpanFields.CATALOG_ID, table.catalogId())
        .setAttribute(SpanFields.TABLE_UUID, table.tableUuid().toString())
        .setAttribute(SpanFields.FRAMES, (long) frames.size())
        .setAttribute(SpanFields.ROWS, frames.stream().mapToLong(WalFrame::rowCount).sum())
        .startSpan();
    try (Scope ignored = span.makeCurrent()) {
      // A fresh nonce per append: a segment carrying it can only be this append's own.
      String nonce = UUID.randomUUID().toString();
      byte[] segment = WalSegmentCodec.encode(writerId, nonce, table.tableUuid(), frames);
      span.setAttribute(SpanFields.BYTES, (long) segment.length);
      AppendResult result = appendSegment(table, segment, nonce);
      // After the segment, never before: a reconcile that cleared a marker put first could see
      // no segment yet and leave the table unmarked.
      putMarkerAfterAppend(table);
      span.setAttribute(SpanFields.SEGMENT_SEQ, result.seq());
      telemetry.metrics().walFlush(segment.length, System.nanoTime() - start);
      backlog.appended(table, result.seq(), segment.length, result.publishedSeq());
      return result.seq();
    } catch (RuntimeException | Error e) {
      SpanFields.fail(span, e);
      throw e;
    } finally {
      span.end();
    }
  }

  /**
   * One small PUT per segment. A failure does not fail the durable append (a retry would write
   * the rows twice): the table is then found by the full sweep, as after a crash here.
   */
  private void putMarkerAfterAppend(TableWal table) {
    try {
      markPending(table);
    } catch (RuntimeException e) {
      LOG.warn("could not put the pending marker of {} after a WAL append; the table is found "
          + "by the next full sweep: {}", table, e.getMessage());
    }
  }

  /** Where an append landed, and {@code published_seq} as read right after it. */
  private record AppendResult(long seq, long publishedSeq) {}

  private AppendResult appendSegment(TableWal table, byte[] segment, String nonce) {
    long seq = Math.max(hint(table), stateFile.read(table).publishedSeq() + 1);
    while (true) {
      if (!create(table, seq, segment, nonce)) {
        seq++;
        continue;
      }
      WalState state = stateFile.read(table);
      if (seq <= state.gcSeq()) {
        // The slot was published and collected before our create landed in it: no reader will
        // ever look at it again, so the rows would be lost. Move them above gc_seq.
        String key = table.segmentKey(seq);
        LOG.info("WAL segment {} landed in a recycled slot (gc_seq {}): rewriting", key,
            state.gcSeq());
        retry.run("delete recycled WAL segment " + key, () -> store.delete(key));
        seq = state.gcSeq() + 1;
        continue;
      }
      nextSeqHints.computeIfAbsent(table, t -> new AtomicLong())
          .accumulateAndGet(seq + 1, Math::max);
      return new AppendResult(seq, state.publishedSeq());
    }
  }

  /**
   * Tries to create segment {@code seq}: true when it now holds our segment (created now, or by
   * an earlier attempt whose response was lost), false when another writer owns the slot.
   */
  private boolean create(TableWal table, long seq, byte[] segment, String nonce) {
    String key = table.segmentKey(seq);
    if (retry.call("create WAL segment " + key, () -> store.putIfAbsent(key, segment))
        .isPresent()) {
      return true;
    }
    Optional<byte[]> head = retry.call("read WAL segment header " + key,
        () -> store.getRange(key, 0, WalSegmentCodec.MAX_HEADER_BYTES));
    if (head.isEmpty()) {
      // Collected between our attempt and this read: the slot is below gc_seq, so not usable.
      return false;
    }
    WalSegmentCodec.Header header;
    try {
      header = WalSegmentCodec.decodeHeader(key, head.get());
    } catch (SeException e) {
      LOG.warn("skipping unreadable WAL segment slot: {}", e.getMessage());
      return false;
    }
    return header.writerId().equals(writerId) && header.writerNonce().equals(nonce);
  }

  private long hint(TableWal table) {
    AtomicLong hint = nextSeqHints.get(table);
    return hint == null ? 0 : hint.get();
  }

  @Override
  public void registerTableName(TableWal table, TableName name) {
    ObjectNode json = tableNameJson(name);
    String key = table.tableNameKey();
    Optional<TableName> current;
    try {
      current = tableName(table);
    } catch (SeException e) {
      if (e.code() != ErrorCode.INTERNAL) {
        throw e;
      }
      current = Optional.empty(); // a damaged hint is simply replaced
    }
    backlog.named(table, name);
    if (current.isPresent() && current.get().equals(name)) {
      return;
    }
    // A plain put: the file is a hint and the last writer's name is as good as any.
    retry.call("write " + key, () -> store.put(key, Json.toBytes(json)));
  }

  @Override
  public WalState state(TableWal table) {
    return stateFile.read(table);
  }

  @Override
  public List<Long> segmentsAfter(TableWal table, long afterSeq) {
    return listAfter(table, afterSeq).stream().map(Listed::seq).toList();
  }

  @Override
  public List<Listed> listAfter(TableWal table, long afterSeq) {
    String prefix = table.walPrefix();
    List<ObjectInfo> objects = retry.call("list " + prefix, () -> store.list(prefix));
    List<Listed> listed = new ArrayList<>();
    for (ObjectInfo object : objects) {
      Matcher m = SEGMENT_NAME.matcher(object.key().substring(prefix.length()));
      if (m.matches()) {
        long seq = Long.parseLong(m.group(1));
        if (seq > afterSeq) {
          listed.add(new Listed(seq, object.lastModified()));
        }
      }
    }
    listed.sort(java.util.Comparator.comparingLong(Listed::seq));
    return listed;
  }

  @Override
  public boolean exists(TableWal table, long seq) {
    String key = table.segmentKey(seq);
    return retry.call("head " + key, () -> store.head(key)).isPresent();
  }

  @Override
  public Optional<WalSegment> read(TableWal table, long seq) {
    String key = table.segmentKey(seq);
    Optional<ObjectStore.Blob> blob = retry.call("read " + key, () -> store.get(key));
    if (blob.isEmpty()) {
      return Optional.empty();
    }
    WalSegment segment = WalSegmentCodec.decode(key, seq, blob.get().data());
    if (!segment.tableUuid().equals(table.tableUuid())) {
      throw new SeException(ErrorCode.INTERNAL, "corrupt WAL segment " + key
          + ": written for table " + segment.tableUuid());
    }
    return Optional.of(segment);
  }

  @Override
  public void advancePublished(TableWal table, long seq) {
    if (seq < 0) {
      throw SeException.invalid("published seq must not be negative, got %d", seq);
    }
    WalState state = stateFile.update(table,
        s -> seq > s.publishedSeq() ? new WalState(seq, s.gcSeq()) : s);
    backlog.published(table, state.publishedSeq());
  }

  @Override
  public int collectGarbage(TableWal table, long seq, Duration producerRetention) {
    // The producers first: once gc_seq is raised, the segments may be gone.
    long collectable = Math.min(seq, stateFile.read(table).publishedSeq());
    if (collectable > stateFile.read(table).gcSeq()) {
      advanceProducerWindows(table, collectable, producerRetention, System.currentTimeMillis(),
          List.of());
    }
    // gc_seq is raised first so that a writer landing in a slot we are about to free sees it.
    WalState state = stateFile.update(table, s -> {
      long target = Math.min(seq, s.publishedSeq());
      return target > s.gcSeq() ? new WalState(s.publishedSeq(), target) : s;
    });
    int deleted = 0;
    // Deletes everything at or below gc_seq, including leftovers of earlier passes and of
    // writers that landed in recycled slots.
    for (long old : segmentsAfter(table, 0)) {
      if (old > state.gcSeq()) {
        break;
      }
      String key = table.segmentKey(old);
      retry.run("delete " + key, () -> store.delete(key));
      deleted++;
    }
    return deleted;
  }

  @Override
  public ProducerWindows producerWindows(TableWal table, long beforeSeq, Duration retention) {
    Optional<ProducerWindows> stored = producerFile.read(table);
    if (stored.isEmpty()) {
      // Created before the first frame with a producer: none of the segments carries one.
      return new ProducerWindows();
    }
    ProducerWindows windows = stored.get();
    for (long seq = windows.throughSeq() + 1; seq < beforeSeq; seq++) {
      read(table, seq).ifPresent(segment -> windows.fold(segment, retention));
    }
    return windows;
  }

  @Override
  public void advanceProducerWindows(TableWal table, long throughSeq, Duration retention,
      long nowMillis, List<WalSegment> known) {
    producerFile.advance(table, throughSeq, retention, nowMillis, known, seq -> read(table, seq));
  }

  @Override
  public ProducerWindows catchUpProducerWindows(TableWal table, ProducerWindows known,
      Duration retention) {
    ProducerWindows windows;
    if (known == null) {
      producerFile.ensureExists(table);
      windows = producerFile.read(table).orElseGet(ProducerWindows::new);
    } else {
      windows = known.copy();
    }
    for (long seq : segmentsAfter(table, windows.throughSeq())) {
      Optional<WalSegment> segment = read(table, seq);
      if (segment.isPresent()) {
        windows.fold(segment.get(), retention);
      }
    }
    return windows;
  }

  @Override
  public int deleteTable(TableWal table) {
    String prefix = table.prefix();
    List<ObjectInfo> objects = retry.call("list " + prefix, () -> store.list(prefix));
    int deleted = 0;
    for (ObjectInfo object : objects) {
      if (!object.key().equals(table.stateKey())) {
        retry.run("delete " + object.key(), () -> store.delete(object.key()));
        deleted++;
      }
    }
    // Before state.json: an interrupted deletion is still listed by tables() and finished.
    retry.run("delete " + table.pendingKey(), () -> store.delete(table.pendingKey()));
    if (objects.stream().anyMatch(o -> o.key().equals(table.stateKey()))) {
      retry.run("delete " + table.stateKey(), () -> store.delete(table.stateKey()));
      deleted++;
    }
    nextSeqHints.remove(table);
    backlog.deleted(table);
    return deleted;
  }

  @Override
  public Optional<TableName> tableName(TableWal table) {
    String key = table.tableNameKey();
    return retry.call("read " + key, () -> store.get(key))
        .map(blob -> parseTableName(key, blob.data()));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Found level by level with {@link ObjectStore#listChildren}, never by listing a whole
   * subtree: the tenant directories under {@code tenants/} (only the one asked for when
   * {@code catalogId} is given), the table directories under each tenant's {@code tables/}, and
   * per table the entries directly in its directory, where a {@code state.json} or a non-empty
   * {@code wal/} directory means the table has a WAL. No listing returns a segment, tombstone or
   * quarantine record, so a call costs about {@code 1 + tenants + 6 x tables} listed entries
   * (tenant, table, and the handful of entries in each table directory) however much WAL the
   * tables hold; listing {@code tenants/} whole returned every key of every tenant.
   */
  @Override
  public List<TableWal> tables(String catalogId) {
    List<TableWal> tables = new ArrayList<>();
    for (String tenant : tenants(catalogId)) {
      for (String directory : children("tenants/" + tenant + "/tables/").directories()) {
        Optional<UUID> uuid = parseUuid(lastSegment(directory));
        if (uuid.isPresent() && hasWal(new TableWal(tenant, uuid.get()))) {
          tables.add(new TableWal(tenant, uuid.get()));
        }
      }
    }
    return List.copyOf(tables);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Costs one listing of {@code tenants/} (none when {@code catalogId} is given) and one of
   * each tenant's {@code pending/}: about {@code tenants + marked tables} listed entries.
   */
  @Override
  public List<TableWal> pendingTables(String catalogId) {
    List<TableWal> tables = new ArrayList<>();
    for (String tenant : tenants(catalogId)) {
      String prefix = TableWal.pendingPrefix(tenant);
      for (ObjectInfo marker : children(prefix).objects()) {
        parseUuid(marker.key().substring(prefix.length()))
            .ifPresent(uuid -> tables.add(new TableWal(tenant, uuid)));
      }
    }
    return List.copyOf(tables);
  }

  @Override
  public void markPending(TableWal table) {
    String key = table.pendingKey();
    retry.run("put " + key, () -> store.put(key, PENDING_MARKER));
  }

  @Override
  public boolean clearPending(TableWal table) {
    String key = table.pendingKey();
    retry.run("delete " + key, () -> store.delete(key));
    if (segmentsAfter(table, stateFile.read(table).publishedSeq()).isEmpty()) {
      return false;
    }
    markPending(table);
    return true;
  }

  /** The tenant asked for, or every tenant directory under {@code tenants/} when null. */
  private List<String> tenants(String catalogId) {
    List<String> tenants = new ArrayList<>();
    if (catalogId != null) {
      tenants.add(Ids.requireCatalogId(catalogId));
    } else {
      for (String directory : children("tenants/").directories()) {
        String tenant = lastSegment(directory);
        if (Ids.isValidCatalogId(tenant)) {
          tenants.add(tenant);
        }
      }
    }
    return tenants;
  }

  /** True when the table's directory holds {@code state.json} or a {@code wal/} directory. */
  private boolean hasWal(TableWal table) {
    ObjectStore.Children entries = children(table.prefix());
    return entries.directories().contains(table.walPrefix())
        || entries.objects().stream().anyMatch(o -> o.key().equals(table.stateKey()));
  }

  private ObjectStore.Children children(String prefix) {
    return retry.call("list " + prefix, () -> store.listChildren(prefix));
  }

  /** {@code b} of a directory {@code a/b/}. */
  private static String lastSegment(String directory) {
    String withoutSlash = directory.substring(0, directory.length() - 1);
    return withoutSlash.substring(withoutSlash.lastIndexOf('/') + 1);
  }

  private static Optional<UUID> parseUuid(String text) {
    try {
      UUID uuid = UUID.fromString(text);
      // fromString accepts shortened forms; only the canonical one names a table directory.
      return uuid.toString().equals(text) ? Optional.of(uuid) : Optional.empty();
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  private static ObjectNode tableNameJson(TableName name) {
    if (name == null || name.namespace() == null || name.name() == null
        || name.name().isEmpty()) {
      throw SeException.invalid("table name needs a namespace and a non-empty name: %s", name);
    }
    ObjectNode json = Json.object();
    ArrayNode namespace = json.putArray("namespace");
    for (String level : name.namespace()) {
      if (level == null || level.isEmpty()) {
        throw SeException.invalid("empty namespace level in table name %s", name);
      }
      namespace.add(level);
    }
    json.put("name", name.name());
    return json;
  }

  private static TableName parseTableName(String key, byte[] bytes) {
    JsonNode node;
    try {
      node = Json.parse(bytes);
    } catch (SeException e) {
      throw corruptName(key, e.getMessage());
    }
    if (!node.isObject() || node.size() != 2 || !node.path("namespace").isArray()
        || !node.path("name").isTextual()) {
      throw corruptName(key, "expected {\"namespace\":[..],\"name\":\"..\"}");
    }
    List<String> namespace = new ArrayList<>();
    for (Iterator<JsonNode> it = node.get("namespace").elements(); it.hasNext(); ) {
      JsonNode level = it.next();
      if (!level.isTextual()) {
        throw corruptName(key, "namespace levels must be strings");
      }
      namespace.add(level.asText());
    }
    return new TableName(List.copyOf(namespace), node.get("name").asText());
  }

  private static SeException corruptName(String key, String detail) {
    return new SeException(ErrorCode.INTERNAL, "corrupt table name file " + key + ": " + detail);
  }
}
