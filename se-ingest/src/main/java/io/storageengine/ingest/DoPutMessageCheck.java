package io.storageengine.ingest;

import com.google.protobuf.InvalidProtocolBufferException;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.MetadataVersion;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.flight.impl.Flight;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Checks the raw {@code FlightData} messages of one DoPut call, in order, BEFORE Arrow Flight
 * parses them into buffers and loads them into vectors. Arrow Java trusts these bytes: sizes in
 * the protobuf framing decide allocations, buffer offsets and lengths in the IPC header decide
 * slices of the body, and a record batch's row count decides how far {@code VectorLoader} grows
 * every vector. After this check, no value in a message can make the server allocate more than
 * the message's own size plus {@code maxBatchBytes}, or slice outside the body.
 *
 * <p>What is checked:
 *
 * <ul>
 *   <li>Framing: only the four FlightData fields, each length within the message; the first
 *       message carries the descriptor, which must be a CMD descriptor.</li>
 *   <li>The IPC header is a readable Arrow message (metadata V4 or V5) of an accepted kind: one
 *       schema first (no second one mid-stream), then record batches, dictionary batches and
 *       metadata-only messages.</li>
 *   <li>Schema: at most {@value #MAX_FIELDS} fields nested at most {@value #MAX_DEPTH} deep, of
 *       layouts ingestion accepts (no unions, views, run-end encoding).</li>
 *   <li>Record and dictionary batches: not compressed; dictionary ids from the schema; exactly
 *       the field nodes and buffers the schema needs; every buffer within the body; every node's
 *       null count within its length, top-level lengths equal to the row count, children at
 *       least as long as their struct; validity, offset and fixed-width data buffers large
 *       enough for the node's length; missing validity buffers (which Arrow then allocates)
 *       only for all-valid or all-null nodes and together at most {@code maxBatchBytes}.</li>
 * </ul>
 *
 * <p>Contents of buffers (offset values, UTF-8, dictionary indices) are checked once loaded,
 * by {@link io.storageengine.wal.ArrowBatchCheck}. Every failure is INVALID_ARGUMENT naming what
 * was wrong. Not thread-safe: one instance per call, fed in message order.
 */
final class DoPutMessageCheck {
  static final int MAX_FIELDS = 10_000;
  static final int MAX_DEPTH = 64;

  private static final int DESCRIPTOR_TAG = (1 << 3) | 2;
  private static final int HEADER_TAG = (2 << 3) | 2;
  private static final int APP_METADATA_TAG = (3 << 3) | 2;
  private static final int BODY_TAG = (1000 << 3) | 2;

  private final long maxBatchBytes;
  private int messages;
  private Schema schema;
  /** Dictionary id -> the field whose values the dictionary holds. */
  private final Map<Long, Field> dictionaries = new HashMap<>();

  /** @param maxBatchBytes the most one batch may make the server allocate beyond its body */
  DoPutMessageCheck(long maxBatchBytes) {
    this.maxBatchBytes = maxBatchBytes;
  }

  /** Checks the next message of the call; throws INVALID_ARGUMENT naming the problem. */
  void check(byte[] flightData) {
    int index = ++messages;
    byte[] descriptor = null;
    byte[] header = null;
    long bodyLength = -1;
    int pos = 0;
    while (pos < flightData.length) {
      long tagAndPos = varint(flightData, pos, "field tag");
      int tag = (int) (tagAndPos >>> 32);
      pos = (int) tagAndPos;
      long sizeAndPos = varint(flightData, pos, "field length");
      int size = (int) (sizeAndPos >>> 32);
      pos = (int) sizeAndPos;
      if (size > flightData.length - pos) {
        throw invalid(index, "a field claims %d bytes, only %d remain in the message", size,
            flightData.length - pos);
      }
      switch (tag) {
        case DESCRIPTOR_TAG -> descriptor = slice(flightData, pos, size);
        case HEADER_TAG -> header = slice(flightData, pos, size);
        case APP_METADATA_TAG -> { }
        case BODY_TAG -> bodyLength = size;
        default -> throw invalid(index, "unexpected protobuf field (tag %d); FlightData has "
            + "flight_descriptor (1), data_header (2), app_metadata (3) and data_body (1000)",
            tag);
      }
      pos += size;
    }
    if (index == 1) {
      checkDescriptor(descriptor);
    } else if (descriptor != null) {
      throw invalid(index, "only the first message may carry a flight_descriptor");
    }
    if (header == null) {
      if (bodyLength > 0) {
        throw invalid(index, "a data_body of %d bytes without a data_header", bodyLength);
      }
      return; // metadata only (or the bare descriptor)
    }
    checkHeader(index, header, Math.max(bodyLength, 0));
  }

  private static void checkDescriptor(byte[] descriptor) {
    if (descriptor == null) {
      throw SeException.invalid("DoPut message 1: the first message must carry the "
          + "flight_descriptor (a CMD descriptor naming what is put)");
    }
    Flight.FlightDescriptor parsed;
    try {
      parsed = Flight.FlightDescriptor.parseFrom(descriptor);
    } catch (InvalidProtocolBufferException e) {
      throw SeException.invalid("DoPut message 1: unreadable flight_descriptor: %s",
          e.getMessage());
    }
    if (parsed.getType() != Flight.FlightDescriptor.DescriptorType.CMD) {
      throw SeException.invalid("DoPut flight_descriptor: must be a CMD descriptor (native "
          + "ingest or a Flight SQL command), got %s%s", parsed.getType(),
          parsed.getType() == Flight.FlightDescriptor.DescriptorType.PATH
              ? " " + parsed.getPathList() : "");
    }
  }

  private void checkHeader(int index, byte[] header, long bodyLength) {
    Message message;
    int type;
    try {
      message = Message.getRootAsMessage(ByteBuffer.wrap(header));
      type = message.headerType();
      short version = message.version();
      if (version != MetadataVersion.V4 && version != MetadataVersion.V5) {
        throw invalid(index, "IPC metadata version %d is not V4 or V5", version);
      }
    } catch (SeException e) {
      throw e;
    } catch (RuntimeException e) {
      throw invalid(index, "data_header is not an Arrow IPC message (%s)", describe(e));
    }
    switch (type) {
      case MessageHeader.Schema -> checkSchema(index, message, header.length, bodyLength);
      case MessageHeader.RecordBatch -> {
        requireSchema(index, "record batch");
        RecordBatch batch = read(index, () -> (RecordBatch) message.header(new RecordBatch()));
        checkBatch(index, "record batch", batch, schema.getFields(), bodyLength, header.length);
      }
      case MessageHeader.DictionaryBatch -> {
        requireSchema(index, "dictionary batch");
        DictionaryBatch dictionary =
            read(index, () -> (DictionaryBatch) message.header(new DictionaryBatch()));
        long id = read(index, dictionary::id);
        Field values = dictionaries.get(id);
        if (values == null) {
          throw invalid(index, "dictionary batch for id %d, which no field of the schema uses "
              + "(known ids: %s)", id, dictionaries.keySet());
        }
        RecordBatch data = read(index, () -> dictionary.data());
        if (data == null) {
          throw invalid(index, "dictionary batch %d has no data", id);
        }
        checkBatch(index, "dictionary batch " + id, data, List.of(values), bodyLength,
            header.length);
      }
      case MessageHeader.NONE -> {
        if (bodyLength > 0) {
          throw invalid(index, "a data_body of %d bytes with an empty IPC message", bodyLength);
        }
      }
      default -> throw invalid(index, "IPC message type %d is not accepted (schema, record batch "
          + "or dictionary batch)", type);
    }
  }

  private void requireSchema(int index, String what) {
    if (schema == null) {
      throw invalid(index, "%s before the stream's schema", what);
    }
  }

  private void checkSchema(int index, Message message, int headerBytes, long bodyLength) {
    if (schema != null) {
      throw invalid(index, "a second schema message: a stream has one schema, sent first; "
          + "send batches of another schema in a new stream");
    }
    if (bodyLength > 0) {
      throw invalid(index, "a schema message with a data_body of %d bytes", bodyLength);
    }
    Schema parsed;
    try {
      org.apache.arrow.flatbuf.Schema fb =
          (org.apache.arrow.flatbuf.Schema) message.header(new org.apache.arrow.flatbuf.Schema());
      int[] count = {0};
      for (int i = 0; i < fb.fieldsLength(); i++) {
        walk(index, fb.fields(i), 1, count, headerBytes);
      }
      parsed = Schema.convertSchema(fb);
    } catch (SeException e) {
      throw e;
    } catch (RuntimeException e) {
      throw invalid(index, "unreadable schema (%s)", describe(e));
    }
    List<String> path = new ArrayList<>();
    for (Field field : parsed.getFields()) {
      checkField(index, field, path);
    }
    schema = parsed;
  }

  /** Bounds the flatbuffer's field tree before Arrow converts it recursively. */
  private static void walk(int index, org.apache.arrow.flatbuf.Field field, int depth,
      int[] count, int headerBytes) {
    if (field == null) {
      throw invalid(index, "schema has a missing field");
    }
    if (depth > MAX_DEPTH) {
      throw invalid(index, "schema nests fields more than %d deep", MAX_DEPTH);
    }
    if (++count[0] > MAX_FIELDS || count[0] > headerBytes) {
      throw invalid(index, "schema has more than %d fields", Math.min(MAX_FIELDS, headerBytes));
    }
    for (int i = 0; i < field.childrenLength(); i++) {
      walk(index, field.children(i), depth + 1, count, headerBytes);
    }
  }

  private void checkField(int index, Field field, List<String> path) {
    path.add(field.getName());
    DictionaryEncoding encoding = field.getDictionary();
    if (encoding != null) {
      ArrowType.Int indexType = encoding.getIndexType();
      if (indexType != null && (indexType.getBitWidth() > 64 || indexType.getBitWidth() < 8)) {
        throw invalid(index, "field `%s`: dictionary index width %d", String.join(".", path),
            indexType.getBitWidth());
      }
      Field values = new Field(field.getName(),
          new org.apache.arrow.vector.types.pojo.FieldType(true, field.getType(), null),
          field.getChildren());
      if (dictionaries.put(encoding.getId(), values) != null) {
        throw invalid(index, "field `%s`: dictionary id %d is used by two fields",
            String.join(".", path), encoding.getId());
      }
    }
    Layout layout = Layout.of(field.getType());
    if (layout == null) {
      throw invalid(index, "field `%s`: type %s is not accepted for ingestion",
          String.join(".", path), field.getType());
    }
    if (layout.dataBits > 1 && (layout.dataBits % 8 != 0 || layout.dataBits > 1 << 23)) {
      throw invalid(index, "field `%s`: type %s has a value width of %d bits",
          String.join(".", path), field.getType(), layout.dataBits);
    }
    int children = field.getChildren().size();
    if (layout.children >= 0 && children != layout.children) {
      throw invalid(index, "field `%s`: type %s needs %d child field(s), has %d",
          String.join(".", path), field.getType(), layout.children, children);
    }
    for (Field child : field.getChildren()) {
      checkField(index, child, path);
    }
    path.remove(path.size() - 1);
  }

  /** Where a batch stands while its nodes and buffers are read in schema order. */
  private static final class Cursor {
    final RecordBatch batch;
    final FieldNode node = new FieldNode();
    final Buffer buffer = new Buffer();
    final long bodyLength;
    int nodes;
    int buffers;
    long implied;

    Cursor(RecordBatch batch, long bodyLength) {
      this.batch = batch;
      this.bodyLength = bodyLength;
    }
  }

  private void checkBatch(int index, String what, RecordBatch batch, List<Field> fields,
      long bodyLength, int headerBytes) {
    long rows;
    int nodeCount;
    int bufferCount;
    try {
      rows = batch.length();
      nodeCount = batch.nodesLength();
      bufferCount = batch.buffersLength();
      if (batch.compression() != null) {
        throw invalid(index, "%s is compressed; send uncompressed batches", what);
      }
      if (batch.variadicBufferCountsLength() != 0) {
        throw invalid(index, "%s has variadic buffer counts, but no view types are accepted",
            what);
      }
    } catch (SeException e) {
      throw e;
    } catch (RuntimeException e) {
      throw invalid(index, "unreadable %s header (%s)", what, describe(e));
    }
    if (rows < 0 || rows > Integer.MAX_VALUE) {
      throw invalid(index, "%s claims %d rows", what, rows);
    }
    if (rows > maxBatchBytes) {
      throw invalid(index, "%s claims %d rows, more than a batch may hold (%d)", what, rows,
          maxBatchBytes);
    }
    int[] expected = new int[2];
    for (Field field : fields) {
      count(field, expected);
    }
    if (nodeCount != expected[0] || bufferCount != expected[1]) {
      throw invalid(index, "%s has %d field nodes and %d buffers, the stream's schema needs %d "
          + "and %d (a batch must have the stream's schema)", what, nodeCount, bufferCount,
          expected[0], expected[1]);
    }
    Cursor cursor = new Cursor(batch, bodyLength);
    try {
      for (Field field : fields) {
        checkNode(index, what, cursor, field, field.getName(), rows, true);
      }
    } catch (SeException e) {
      throw e;
    } catch (RuntimeException e) {
      throw invalid(index, "unreadable %s header (%s)", what, describe(e));
    }
    if (cursor.implied > maxBatchBytes) {
      throw invalid(index, "%s omits validity buffers that would take %d bytes, more than %d",
          what, cursor.implied, maxBatchBytes);
    }
  }

  /** Adds the field nodes and buffers {@code field} takes in a batch. */
  private static void count(Field field, int[] counts) {
    counts[0]++;
    if (field.getDictionary() != null) {
      counts[1] += 2; // validity + indices; the values travel in dictionary batches
      return;
    }
    counts[1] += Layout.of(field.getType()).buffers;
    for (Field child : field.getChildren()) {
      count(child, counts);
    }
  }

  private void checkNode(int index, String what, Cursor c, Field field, String name,
      long minLength, boolean exact) {
    c.batch.nodes(c.node, c.nodes++);
    long length = c.node.length();
    long nulls = c.node.nullCount();
    if (length < 0 || length > Integer.MAX_VALUE) {
      throw invalid(index, "%s, column `%s`: length %d", what, name, length);
    }
    if (exact ? length != minLength : length < minLength) {
      throw invalid(index, "%s, column `%s`: length %d, %s %d", what, name, length,
          exact ? "but the batch has rows:" : "shorter than its parent:", minLength);
    }
    if (nulls < 0 || nulls > length) {
      throw invalid(index, "%s, column `%s`: null count %d of %d values", what, name, nulls,
          length);
    }
    Layout layout = field.getDictionary() != null
        ? Layout.fixed(field.getDictionary().getIndexType() == null ? 32
            : field.getDictionary().getIndexType().getBitWidth())
        : Layout.of(field.getType());
    // Validity.
    long validity = buffer(index, what, c, name, "validity");
    long validityNeeded = (length + 7) / 8;
    if (validity == 0) {
      if (nulls != 0 && nulls != length) {
        throw invalid(index, "%s, column `%s`: %d nulls but no validity buffer", what, name,
            nulls);
      }
      c.implied += validityNeeded;
    } else if (validity < validityNeeded) {
      throw invalid(index, "%s, column `%s`: validity buffer of %d bytes for %d values", what,
          name, validity, length);
    }
    if (layout.offsetBytes > 0) {
      long offsets = buffer(index, what, c, name, "offsets");
      long needed = length == 0 ? 0 : (length + 1) * layout.offsetBytes;
      if (offsets < needed) {
        throw invalid(index, "%s, column `%s`: offsets buffer of %d bytes for %d values "
            + "(needs %d)", what, name, offsets, length, needed);
      }
    }
    if (layout.dataBits > 0) {
      long data = buffer(index, what, c, name, "data");
      long needed = (length * layout.dataBits + 7) / 8;
      if (data < needed) {
        throw invalid(index, "%s, column `%s`: data buffer of %d bytes for %d values "
            + "(needs %d)", what, name, data, length, needed);
      }
    } else if (layout.dataBits == Layout.VARIABLE) {
      buffer(index, what, c, name, "data");
    }
    if (field.getDictionary() != null) {
      return;
    }
    ArrowType type = field.getType();
    for (Field child : field.getChildren()) {
      String childName = name + "." + child.getName();
      if (type instanceof ArrowType.Struct) {
        checkNode(index, what, c, child, childName, length, false);
      } else if (type instanceof ArrowType.FixedSizeList list) {
        checkNode(index, what, c, child, childName, length * list.getListSize(), false);
      } else {
        checkNode(index, what, c, child, childName, 0, false); // offsets bound it, once loaded
      }
    }
  }

  /** Reads the next buffer, checks it lies within the body, and returns its length. */
  private static long buffer(int index, String what, Cursor c, String name, String kind) {
    c.batch.buffers(c.buffer, c.buffers++);
    long offset = c.buffer.offset();
    long length = c.buffer.length();
    if (offset < 0 || length < 0 || offset > c.bodyLength || length > c.bodyLength - offset) {
      throw invalid(index, "%s, column `%s`: %s buffer at offset %d of %d bytes lies outside "
          + "the %d-byte body", what, name, kind, offset, length, c.bodyLength);
    }
    return length;
  }

  /** The buffers of one type after its validity buffer. */
  private record Layout(int offsetBytes, int dataBits, int buffers, int children) {
    static final int VARIABLE = -1;

    static Layout fixed(int bits) {
      return new Layout(0, bits, 2, 0);
    }

    /** Null for types ingestion does not accept. */
    static Layout of(ArrowType type) {
      return switch (type.getTypeID()) {
        case Bool -> fixed(1);
        case Int -> fixed(((ArrowType.Int) type).getBitWidth());
        case FloatingPoint -> fixed(switch (((ArrowType.FloatingPoint) type).getPrecision()) {
          case HALF -> 16;
          case SINGLE -> 32;
          case DOUBLE -> 64;
        });
        case Decimal -> fixed(((ArrowType.Decimal) type).getBitWidth());
        case Date -> fixed(((ArrowType.Date) type).getUnit()
            == org.apache.arrow.vector.types.DateUnit.DAY ? 32 : 64);
        case Time -> fixed(((ArrowType.Time) type).getBitWidth());
        case Timestamp, Duration -> fixed(64);
        case Interval -> fixed(switch (((ArrowType.Interval) type).getUnit()) {
          case YEAR_MONTH -> 32;
          case DAY_TIME -> 64;
          case MONTH_DAY_NANO -> 128;
        });
        case FixedSizeBinary -> fixed(((ArrowType.FixedSizeBinary) type).getByteWidth() * 8);
        case Utf8, Binary -> new Layout(4, VARIABLE, 3, 0);
        case LargeUtf8, LargeBinary -> new Layout(8, VARIABLE, 3, 0);
        case List, Map -> new Layout(4, 0, 2, 1);
        case LargeList -> new Layout(8, 0, 2, 1);
        case FixedSizeList -> new Layout(0, 0, 1, 1);
        case Struct -> new Layout(0, 0, 1, -1);
        default -> null; // Null, Union, views, run-end encoded, extension
      };
    }
  }

  private interface Read<T> {
    T get();
  }

  private static <T> T read(int index, Read<T> read) {
    try {
      return read.get();
    } catch (RuntimeException e) {
      throw invalid(index, "unreadable IPC header (%s)", describe(e));
    }
  }

  private static byte[] slice(byte[] bytes, int from, int length) {
    byte[] out = new byte[length];
    System.arraycopy(bytes, from, out, 0, length);
    return out;
  }

  /** A varint32 at {@code pos}: (value << 32) | position after it. */
  private long varint(byte[] bytes, int pos, String what) {
    long value = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      if (pos >= bytes.length) {
        throw invalid(messages, "truncated protobuf %s", what);
      }
      byte b = bytes[pos++];
      value |= (long) (b & 0x7f) << shift;
      if (b >= 0) {
        if (value > Integer.MAX_VALUE) {
          throw invalid(messages, "protobuf %s %d is out of range", what, value);
        }
        return (value << 32) | pos;
      }
    }
    throw invalid(messages, "protobuf %s is longer than 5 bytes", what);
  }

  private static String describe(RuntimeException e) {
    return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
  }

  private static SeException invalid(int index, String fmt, Object... args) {
    return new SeException(ErrorCode.INVALID_ARGUMENT,
        "DoPut message " + index + ": " + String.format(fmt, args));
  }
}
