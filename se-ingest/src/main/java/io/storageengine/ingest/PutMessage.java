package io.storageengine.ingest;

import com.google.protobuf.CodedInputStream;
import io.storageengine.common.SeException;
import java.io.IOException;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * One Flight {@code FlightData} message of a DoPut call, as received (protobuf bytes), split
 * into its fields without copying the body: {@code flight_descriptor} (1), {@code data_header}
 * (2, an Arrow IPC {@code Message} flatbuffer), {@code app_metadata} (3) and {@code data_body}
 * (1000). An absent field is null (the body: length -1); an empty one is an empty array.
 */
final class PutMessage {
  private static final int DESCRIPTOR = 1;
  private static final int HEADER = 2;
  private static final int APP_METADATA = 3;
  private static final int BODY = 1000;

  private final byte[] bytes;
  private final byte[] descriptor;
  private final byte[] header;
  private final byte[] appMetadata;
  private final int bodyOffset;
  private final int bodyLength;

  private PutMessage(byte[] bytes, byte[] descriptor, byte[] header, byte[] appMetadata,
      int bodyOffset, int bodyLength) {
    this.bytes = bytes;
    this.descriptor = descriptor;
    this.header = header;
    this.appMetadata = appMetadata;
    this.bodyOffset = bodyOffset;
    this.bodyLength = bodyLength;
  }

  /** Splits {@code bytes}; INVALID_ARGUMENT if they are not a readable FlightData message. */
  static PutMessage parse(byte[] bytes) {
    byte[] descriptor = null;
    byte[] header = null;
    byte[] appMetadata = null;
    int bodyOffset = 0;
    int bodyLength = -1;
    CodedInputStream in = CodedInputStream.newInstance(bytes);
    try {
      for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
        switch (tag >>> 3) {
          case DESCRIPTOR -> descriptor = in.readByteArray();
          case HEADER -> header = in.readByteArray();
          case APP_METADATA -> appMetadata = in.readByteArray();
          case BODY -> {
            int length = in.readRawVarint32();
            if (length < 0 || length > bytes.length - in.getTotalBytesRead()) {
              throw SeException.invalid("DoPut: a data_body of %d bytes in a message of %d",
                  length, bytes.length);
            }
            bodyOffset = in.getTotalBytesRead();
            bodyLength = length;
            in.skipRawBytes(length);
          }
          default -> in.skipField(tag);
        }
      }
    } catch (IOException e) {
      throw SeException.invalid("DoPut: unreadable FlightData message (%s)", e.getMessage());
    }
    return new PutMessage(bytes, descriptor, header, appMetadata, bodyOffset, bodyLength);
  }

  byte[] descriptor() {
    return descriptor;
  }

  byte[] header() {
    return header;
  }

  byte[] appMetadata() {
    return appMetadata;
  }

  /** The body copied into a new buffer of {@code allocator}; the caller closes it. */
  ArrowBuf body(BufferAllocator allocator) {
    int length = Math.max(bodyLength, 0);
    ArrowBuf body = allocator.buffer(length);
    body.setBytes(0, bytes, bodyOffset, length);
    body.writerIndex(length);
    return body;
  }
}
