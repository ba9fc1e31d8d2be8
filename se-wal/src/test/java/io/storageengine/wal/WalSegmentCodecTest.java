package io.storageengine.wal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class WalSegmentCodecTest {
  private static final String KEY = "tenants/c/tables/t/wal/00000000000000000007.seg";
  private static final String WRITER = "writer-1";
  private static final String NONCE = "nonce-1";
  private static final UUID TABLE = UUID.fromString("6f1c1d2e-0a4b-4c8d-9e0f-112233445566");

  // Offsets of the regions of SEGMENT below, following the layout in WalSegmentCodec's Javadoc.
  private static final int WRITER_LENGTH = 6;
  private static final int WRITER_ID = 8;
  private static final int NONCE_ID = WRITER_ID + WRITER.length() + 2;
  private static final int UUID_AT = NONCE_ID + NONCE.length();
  private static final int FRAME_COUNT = UUID_AT + 16;
  private static final int HEADER_CRC = FRAME_COUNT + 4;
  private static final int FRAME0 = HEADER_CRC + 4;
  private static final int REQUEST_ID_COUNT = FRAME0 + 5;
  private static final int REQUEST_IDS = FRAME0 + 9;
  private static final int ROW_COUNT = REQUEST_IDS + 2 * 8;
  private static final int IPC_LENGTH = ROW_COUNT + 8;
  private static final int IPC = IPC_LENGTH + 4;
  private static final int FRAME0_CRC = IPC + 5;
  private static final int FRAME1 = FRAME0_CRC + 4;

  private static final List<WalFrame> FRAMES = List.of(
      new WalFrame(WalOperation.UPSERT, 3, new long[] {11, 12}, 2, bytes("ipc-0")),
      new WalFrame(WalOperation.DELETE, 4, new long[] {13}, 1, bytes("ipc-one")));
  private static final byte[] SEGMENT = WalSegmentCodec.encode(WRITER, NONCE, TABLE, FRAMES);

  @Test
  void roundTripKeepsEveryField() {
    WalSegment segment = WalSegmentCodec.decode(KEY, 7, SEGMENT);

    assertThat(segment.seq()).isEqualTo(7);
    assertThat(segment.writerId()).isEqualTo(WRITER);
    assertThat(segment.writerNonce()).isEqualTo(NONCE);
    assertThat(segment.tableUuid()).isEqualTo(TABLE);
    assertThat(segment.rowCount()).isEqualTo(3);
    assertThat(segment.frames()).hasSize(2);
    for (int i = 0; i < FRAMES.size(); i++) {
      assertSameFrame(segment.frames().get(i), FRAMES.get(i));
    }
    assertThat(WalSegmentCodec.encode(segment)).isEqualTo(SEGMENT);
    assertThat(SEGMENT).hasSize(FRAME1 + 1 + 4 + 4 + 8 + 8 + 4 + 7 + 4);
  }

  @Test
  void roundTripOfRealArrowPayloads() {
    try (BufferAllocator allocator = new RootAllocator()) {
      byte[] first = ArrowPayloads.rows(allocator, 100, 3);
      byte[] second = ArrowPayloads.rows(allocator, 200, 2);
      List<WalFrame> frames = List.of(
          new WalFrame(WalOperation.UPSERT, 0, new long[] {1}, 3, first),
          new WalFrame(WalOperation.UPSERT, 0, new long[] {2, 3}, 2, second));

      WalSegment decoded = WalSegmentCodec.decode(
          KEY, 1, WalSegmentCodec.encode("w", "n", TABLE, frames));

      assertThat(decoded.frames().get(0).arrowIpc()).isEqualTo(first);
      ArrowPayloads.Decoded rows = ArrowPayloads.read(allocator, decoded.frames().get(1).arrowIpc());
      assertThat(rows.ids()).containsExactly(200L, 201L);
      assertThat(rows.schema().findField("id").getMetadata())
          .containsEntry(WalFrame.FIELD_ID_METADATA_KEY, "1");
    }
  }

  @Test
  void headerDecodesFromAPrefix() {
    byte[] prefix = Arrays.copyOf(SEGMENT, Math.min(SEGMENT.length, WalSegmentCodec.MAX_HEADER_BYTES));
    assertThat(WalSegmentCodec.decodeHeader(KEY, prefix))
        .isEqualTo(new WalSegmentCodec.Header(WRITER, NONCE, TABLE, 2, 1));
  }

  static Stream<Arguments> regions() {
    return Stream.of(
        Arguments.of("magic", 1, "bad magic bytes"),
        Arguments.of("version", 5, "unsupported format version 254 (expected 1 or 2)"),
        Arguments.of("writer id length", WRITER_LENGTH, "writer id length 65288 out of range"),
        Arguments.of("writer id", WRITER_ID + 3, "header checksum mismatch"),
        Arguments.of("writer nonce", NONCE_ID, "header checksum mismatch"),
        Arguments.of("table uuid", UUID_AT + 15, "header checksum mismatch"),
        Arguments.of("frame count", FRAME_COUNT + 3, "header checksum mismatch"),
        Arguments.of("header crc", HEADER_CRC + 1, "header checksum mismatch"),
        Arguments.of("operation", FRAME0, "frame 0: checksum mismatch"),
        Arguments.of("schema id", FRAME0 + 4, "frame 0: checksum mismatch"),
        Arguments.of("request id count", REQUEST_ID_COUNT,
            "frame 0: request id count -16777214 exceeds"),
        Arguments.of("request ids", REQUEST_IDS + 7, "frame 0: checksum mismatch"),
        Arguments.of("row count", ROW_COUNT + 7, "frame 0: checksum mismatch"),
        Arguments.of("ipc length", IPC_LENGTH, "frame 0: Arrow IPC length -16777211 exceeds"),
        Arguments.of("ipc bytes", IPC + 2, "frame 0: checksum mismatch"),
        Arguments.of("frame crc", FRAME0_CRC + 3, "frame 0: checksum mismatch"),
        Arguments.of("second frame", FRAME1 + 1, "frame 1: checksum mismatch"),
        Arguments.of("last byte", SEGMENT.length - 1, "frame 1: checksum mismatch"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("regions")
  void flippedByteInEachRegionIsReported(String region, int offset, String expected) {
    byte[] damaged = SEGMENT.clone();
    damaged[offset] ^= (byte) 0xFF;
    assertCorrupt(damaged, expected);
  }

  @Test
  void everySingleByteFlipIsDetected() {
    for (int i = 0; i < SEGMENT.length; i++) {
      for (int bit = 0; bit < 8; bit++) {
        byte[] damaged = SEGMENT.clone();
        damaged[i] ^= (byte) (1 << bit);
        assertThatThrownBy(() -> WalSegmentCodec.decode(KEY, 7, damaged))
            .as("bit %d of byte %d", bit, i)
            .isInstanceOfSatisfying(SeException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL))
            .hasMessageStartingWith("corrupt WAL segment " + KEY + ": ");
      }
    }
  }

  @Test
  void truncationAndTrailingBytesAreReported() {
    assertCorrupt(Arrays.copyOf(SEGMENT, 10), "truncated header (10 bytes)");
    assertCorrupt(Arrays.copyOf(SEGMENT, FRAME1), "frame 1: truncated (0 bytes left)");
    assertCorrupt(Arrays.copyOf(SEGMENT, SEGMENT.length - 1),
        "frame 1: Arrow IPC length 7 exceeds the 10 bytes left");
    assertCorrupt(Arrays.copyOf(SEGMENT, SEGMENT.length + 3), "3 unexpected bytes after frame 1");
    assertCorrupt(new byte[0], "truncated header (0 bytes)");
  }

  @Test
  void encodeRejectsWhatAHeaderCannotHold() {
    assertThatThrownBy(() -> WalSegmentCodec.encode("", NONCE, TABLE, FRAMES))
        .isInstanceOf(SeException.class)
        .hasMessage("writer id '' must be 1 to 255 UTF-8 bytes long");
    assertThatThrownBy(() -> WalSegmentCodec.encode("w".repeat(256), NONCE, TABLE, FRAMES))
        .isInstanceOf(SeException.class)
        .hasMessageContaining("must be 1 to 255 UTF-8 bytes long");
    assertThatThrownBy(() -> WalSegmentCodec.encode(WRITER, NONCE, TABLE, List.of()))
        .isInstanceOf(SeException.class)
        .hasMessage("a WAL segment needs at least one frame");
    assertThatThrownBy(() -> WalSegmentCodec.encode(WRITER, NONCE, TABLE,
        List.of(new WalFrame(WalOperation.UPSERT, 0, new long[0], -1, new byte[0]))))
        .isInstanceOf(SeException.class)
        .hasMessage("WAL frame 0: negative row count -1");
  }

  static void assertSameFrame(WalFrame actual, WalFrame expected) {
    assertThat(actual.operation()).isEqualTo(expected.operation());
    assertThat(actual.schemaId()).isEqualTo(expected.schemaId());
    assertThat(actual.requestIds()).isEqualTo(expected.requestIds());
    assertThat(actual.rowCount()).isEqualTo(expected.rowCount());
    assertThat(actual.arrowIpc()).isEqualTo(expected.arrowIpc());
  }

  private static void assertCorrupt(byte[] damaged, String expected) {
    assertThatThrownBy(() -> WalSegmentCodec.decode(KEY, 7, damaged))
        .isInstanceOfSatisfying(SeException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL))
        .hasMessageStartingWith("corrupt WAL segment " + KEY + ": " + expected);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
