package io.storageengine.wal;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * The byte format of a WAL segment. All integers are big-endian; strings are UTF-8.
 *
 * <pre>
 * header
 *   4  magic            "SEWL" (0x53 0x45 0x57 0x4C)
 *   2  format version   1 or 2 (2: frames carry a producer block)
 *   2  writer id length n (1..255)
 *   n  writer id
 *   2  nonce length     m (1..255)
 *   m  writer nonce
 *   16 table uuid       most then least significant bits
 *   4  frame count      f (>= 1)
 *   4  CRC32C           over every header byte before it
 * f frames, each
 *   1  operation code   {@link WalOperation#code()}
 *   4  schema id
 *   4  request id count r
 *   8r request ids
 *   8  row count        >= 0
 *   version 2 only: the producer block of an idempotent write
 *   2  producer id length p (0: a plain write, nothing follows; else 1..128)
 *   p  producer id      ASCII, see {@link ProducerStamp#checkProducerId}
 *   8  sequence         >= 0 (only when p > 0)
 *   8  write time       epoch millis (only when p > 0)
 *   4  Arrow IPC length k
 *   k  Arrow IPC stream bytes
 *   4  CRC32C           over every byte of the frame before it
 * nothing after the last frame
 * </pre>
 *
 * <p>The header has its own checksum so that a damaged writer id or nonce cannot make a writer
 * mistake another writer's segment for its own. Decoding checks magic, version, every length
 * against the bytes left, every checksum, and that nothing trails the last frame; any failure
 * is {@code SeException(INTERNAL, "corrupt WAL segment <key>: ...")}.
 *
 * <p>A segment is written in version 1 unless one of its frames carries a producer, so plain
 * writes produce the same bytes as before producers existed; both versions are read.
 */
public final class WalSegmentCodec {
  public static final int FORMAT_VERSION = 1;
  /** The version whose frames carry a producer block. */
  public static final int PRODUCER_FORMAT_VERSION = 2;
  /** Upper bound of the header size: reading this many bytes always yields the whole header. */
  public static final int MAX_HEADER_BYTES = 4 + 2 + 2 + 255 + 2 + 255 + 16 + 4 + 4;

  private static final byte[] MAGIC = {0x53, 0x45, 0x57, 0x4C};
  private static final int MAX_ID_BYTES = 255;
  /** op + schema id + request id count + row count + ipc length + crc. */
  private static final int FRAME_FIXED_BYTES = 1 + 4 + 4 + 8 + 4 + 4;

  private WalSegmentCodec() {}

  /** What a segment says about its origin; enough to recognise one's own earlier write. */
  public record Header(String writerId, String writerNonce, UUID tableUuid, int frameCount,
      int version) {}

  /** Encodes a segment; the frames must be non-empty and the ids 1..255 UTF-8 bytes long. */
  public static byte[] encode(
      String writerId, String writerNonce, UUID tableUuid, List<WalFrame> frames) {
    byte[] writer = idBytes("writer id", writerId);
    byte[] nonce = idBytes("writer nonce", writerNonce);
    Objects.requireNonNull(tableUuid, "tableUuid");
    if (frames == null || frames.isEmpty()) {
      throw SeException.invalid("a WAL segment needs at least one frame");
    }
    int version = FORMAT_VERSION;
    for (WalFrame frame : frames) {
      if (frame != null && frame.producer() != null) {
        version = PRODUCER_FORMAT_VERSION;
      }
    }
    long size = 4 + 2 + 2 + writer.length + 2 + nonce.length + 16 + 4 + 4;
    for (int i = 0; i < frames.size(); i++) {
      size += frameSize(i, frames.get(i), version);
    }
    if (size > Integer.MAX_VALUE - 16) {
      throw SeException.invalid("WAL segment of %d bytes is too large", size);
    }
    ByteBuffer out = ByteBuffer.allocate((int) size);
    out.put(MAGIC).putShort((short) version);
    out.putShort((short) writer.length).put(writer);
    out.putShort((short) nonce.length).put(nonce);
    out.putLong(tableUuid.getMostSignificantBits()).putLong(tableUuid.getLeastSignificantBits());
    out.putInt(frames.size());
    out.putInt(crc(out.array(), 0, out.position()));
    for (WalFrame frame : frames) {
      int start = out.position();
      out.put(frame.operation().code()).putInt(frame.schemaId());
      out.putInt(frame.requestIds().length);
      for (long id : frame.requestIds()) {
        out.putLong(id);
      }
      out.putLong(frame.rowCount());
      if (version == PRODUCER_FORMAT_VERSION) {
        putProducer(out, frame.producer());
      }
      out.putInt(frame.arrowIpc().length).put(frame.arrowIpc());
      out.putInt(crc(out.array(), start, out.position() - start));
    }
    return out.array();
  }

  /** Encodes {@code segment}; its seq is not stored (it is the object's key). */
  public static byte[] encode(WalSegment segment) {
    return encode(
        segment.writerId(), segment.writerNonce(), segment.tableUuid(), segment.frames());
  }

  /** Decodes and checks a whole segment read from {@code key}. */
  public static WalSegment decode(String key, long seq, byte[] bytes) {
    ByteBuffer in = ByteBuffer.wrap(bytes);
    Header header = readHeader(key, in);
    List<WalFrame> frames = new ArrayList<>(Math.min(header.frameCount(), 1024));
    for (int i = 0; i < header.frameCount(); i++) {
      frames.add(readFrame(key, i, in, header.version()));
    }
    if (in.hasRemaining()) {
      throw corrupt(key, "%d unexpected bytes after frame %d", in.remaining(),
          header.frameCount() - 1);
    }
    return new WalSegment(
        seq, header.writerId(), header.writerNonce(), header.tableUuid(), List.copyOf(frames));
  }

  /**
   * Decodes and checks only the header, from the first bytes of a segment (at least
   * {@link #MAX_HEADER_BYTES} of them, or the whole segment if it is shorter).
   */
  public static Header decodeHeader(String key, byte[] prefix) {
    return readHeader(key, ByteBuffer.wrap(prefix));
  }

  private static Header readHeader(String key, ByteBuffer in) {
    try {
      byte[] magic = new byte[MAGIC.length];
      in.get(magic);
      for (int i = 0; i < MAGIC.length; i++) {
        if (magic[i] != MAGIC[i]) {
          throw corrupt(key, "bad magic bytes");
        }
      }
      int version = Short.toUnsignedInt(in.getShort());
      if (version != FORMAT_VERSION && version != PRODUCER_FORMAT_VERSION) {
        throw corrupt(key, "unsupported format version %d (expected %d or %d)", version,
            FORMAT_VERSION, PRODUCER_FORMAT_VERSION);
      }
      byte[] writerId = readIdBytes(key, "writer id", in);
      byte[] nonce = readIdBytes(key, "writer nonce", in);
      UUID table = new UUID(in.getLong(), in.getLong());
      int frameCount = in.getInt();
      int expectedCrc = crc(in.array(), 0, in.position());
      if (in.getInt() != expectedCrc) {
        throw corrupt(key, "header checksum mismatch");
      }
      if (frameCount < 1) {
        throw corrupt(key, "frame count %d", frameCount);
      }
      return new Header(utf8(key, "writer id", writerId), utf8(key, "writer nonce", nonce), table,
          frameCount, version);
    } catch (BufferUnderflowException e) {
      throw corrupt(key, "truncated header (%d bytes)", in.limit());
    }
  }

  private static WalFrame readFrame(String key, int index, ByteBuffer in, int version) {
    int start = in.position();
    if (in.remaining() < FRAME_FIXED_BYTES) {
      throw corrupt(key, "frame %d: truncated (%d bytes left)", index, in.remaining());
    }
    byte opCode = in.get();
    int schemaId = in.getInt();
    int requestIdCount = in.getInt();
    // Lengths are checked against the bytes left before anything is allocated, so a damaged
    // length is reported as such instead of exhausting memory.
    if (requestIdCount < 0 || (long) requestIdCount * 8 > in.remaining() - (8 + 4 + 4)) {
      throw corrupt(key, "frame %d: request id count %d exceeds the %d bytes left", index,
          requestIdCount, in.remaining());
    }
    long[] requestIds = new long[requestIdCount];
    for (int i = 0; i < requestIdCount; i++) {
      requestIds[i] = in.getLong();
    }
    long rowCount = in.getLong();
    byte[] producerId = null;
    long sequence = 0;
    long writeMillis = 0;
    if (version == PRODUCER_FORMAT_VERSION) {
      if (in.remaining() < 2 + 4 + 4) {
        throw corrupt(key, "frame %d: truncated producer block", index);
      }
      int producerLength = Short.toUnsignedInt(in.getShort());
      if (producerLength > 0) {
        if (producerLength > ProducerStamp.MAX_PRODUCER_ID_LENGTH
            || in.remaining() < producerLength + 8 + 8 + 4 + 4) {
          throw corrupt(key, "frame %d: producer id length %d out of range", index,
              producerLength);
        }
        producerId = new byte[producerLength];
        in.get(producerId);
        sequence = in.getLong();
        writeMillis = in.getLong();
      }
    }
    if (in.remaining() < 4 + 4) {
      throw corrupt(key, "frame %d: truncated (%d bytes left)", index, in.remaining());
    }
    int ipcLength = in.getInt();
    if (ipcLength < 0 || ipcLength > in.remaining() - 4) {
      throw corrupt(key, "frame %d: Arrow IPC length %d exceeds the %d bytes left", index,
          ipcLength, in.remaining());
    }
    byte[] ipc = new byte[ipcLength];
    in.get(ipc);
    int expectedCrc = crc(in.array(), start, in.position() - start);
    if (in.getInt() != expectedCrc) {
      throw corrupt(key, "frame %d: checksum mismatch", index);
    }
    // Interpreted only after the checksum passed: a bad value here is a writer bug.
    WalOperation operation;
    try {
      operation = WalOperation.fromCode(opCode);
    } catch (IllegalArgumentException e) {
      throw corrupt(key, "frame %d: unknown operation code %d", index, opCode);
    }
    if (rowCount < 0) {
      throw corrupt(key, "frame %d: negative row count %d", index, rowCount);
    }
    ProducerStamp producer = null;
    if (producerId != null) {
      try {
        producer = new ProducerStamp(
            new String(producerId, StandardCharsets.US_ASCII), sequence, writeMillis);
      } catch (SeException e) {
        throw corrupt(key, "frame %d: %s", index, e.getMessage());
      }
    }
    return new WalFrame(operation, schemaId, requestIds, rowCount, ipc, producer);
  }

  private static void putProducer(ByteBuffer out, ProducerStamp producer) {
    if (producer == null) {
      out.putShort((short) 0);
      return;
    }
    byte[] id = producer.producerId().getBytes(StandardCharsets.US_ASCII);
    out.putShort((short) id.length).put(id);
    out.putLong(producer.sequence()).putLong(producer.writeMillis());
  }

  private static long producerBytes(ProducerStamp producer) {
    return producer == null ? 2 : 2 + producer.producerId().length() + 8 + 8;
  }

  private static long frameSize(int index, WalFrame frame, int version) {
    if (frame == null || frame.operation() == null || frame.requestIds() == null
        || frame.arrowIpc() == null) {
      throw SeException.invalid("WAL frame %d is incomplete", index);
    }
    if (frame.rowCount() < 0) {
      throw SeException.invalid("WAL frame %d: negative row count %d", index, frame.rowCount());
    }
    long producer = version == PRODUCER_FORMAT_VERSION ? producerBytes(frame.producer()) : 0;
    return FRAME_FIXED_BYTES + 8L * frame.requestIds().length + producer
        + frame.arrowIpc().length;
  }

  /** Returns {@code writerId} if a header can hold it (1 to 255 UTF-8 bytes), else throws. */
  public static String checkWriterId(String writerId) {
    idBytes("writer id", writerId);
    return writerId;
  }

  private static byte[] idBytes(String what, String value) {
    byte[] bytes = value == null ? new byte[0] : value.getBytes(StandardCharsets.UTF_8);
    if (bytes.length == 0 || bytes.length > MAX_ID_BYTES) {
      throw SeException.invalid(
          "%s '%s' must be 1 to %d UTF-8 bytes long", what, value, MAX_ID_BYTES);
    }
    return bytes;
  }

  private static byte[] readIdBytes(String key, String what, ByteBuffer in) {
    int length = Short.toUnsignedInt(in.getShort());
    if (length == 0 || length > MAX_ID_BYTES) {
      throw corrupt(key, "%s length %d out of range", what, length);
    }
    byte[] bytes = new byte[length];
    in.get(bytes);
    return bytes;
  }

  private static String utf8(String key, String what, byte[] bytes) {
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw corrupt(key, "%s is not UTF-8", what);
    }
  }

  private static int crc(byte[] bytes, int offset, int length) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, offset, length);
    return (int) crc.getValue();
  }

  private static SeException corrupt(String key, String fmt, Object... args) {
    return new SeException(
        ErrorCode.INTERNAL, "corrupt WAL segment " + key + ": " + String.format(fmt, args));
  }
}
