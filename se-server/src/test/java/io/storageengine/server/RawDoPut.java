package io.storageengine.server;

import com.google.flatbuffers.Struct;
import com.google.flatbuffers.Table;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flight.impl.Flight;

/**
 * DoPut at the byte level, for tests that send what no Arrow client would: FlightData messages
 * built field by field, an IPC stream split into messages, and positions inside a flatbuffer
 * header to overwrite.
 */
final class RawDoPut {
  static final MethodDescriptor<byte[], byte[]> DO_PUT = MethodDescriptor.<byte[], byte[]>newBuilder()
      .setType(MethodDescriptor.MethodType.BIDI_STREAMING)
      .setFullMethodName("arrow.flight.protocol.FlightService/DoPut")
      .setRequestMarshaller(ByteArrayMarshaller.INSTANCE)
      .setResponseMarshaller(ByteArrayMarshaller.INSTANCE)
      .build();

  /** One message of an IPC stream: its flatbuffer header and its body. */
  record IpcMessage(byte[] header, byte[] body) {
    Message message() {
      return Message.getRootAsMessage(ByteBuffer.wrap(header));
    }
  }

  /** The outcome of a call: its status and the number of PutResults received. */
  record Outcome(Status status, int results) {}

  private RawDoPut() {}

  /** Splits an Arrow IPC stream into its messages (without the end-of-stream marker). */
  static List<IpcMessage> split(byte[] stream) {
    List<IpcMessage> out = new ArrayList<>();
    ByteBuffer in = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN);
    while (in.remaining() >= 8) {
      int first = in.getInt();
      int length = first == -1 ? in.getInt() : first;
      if (length == 0) {
        break;
      }
      byte[] header = new byte[length];
      in.get(header);
      long bodyLength = Message.getRootAsMessage(ByteBuffer.wrap(header)).bodyLength();
      byte[] body = new byte[(int) bodyLength];
      in.get(body);
      out.add(new IpcMessage(header, body));
    }
    return out;
  }

  /** A FlightData message; null parts are left out. */
  static byte[] flightData(byte[] descriptor, byte[] header, byte[] appMetadata, byte[] body) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    field(out, 1, descriptor);
    field(out, 2, header);
    field(out, 3, appMetadata);
    field(out, 1000, body);
    return out.toByteArray();
  }

  static byte[] cmdDescriptor(byte[] command) {
    return Flight.FlightDescriptor.newBuilder().setType(Flight.FlightDescriptor.DescriptorType.CMD)
        .setCmd(com.google.protobuf.ByteString.copyFrom(command)).build().toByteArray();
  }

  private static void field(ByteArrayOutputStream out, int number, byte[] value) {
    if (value == null) {
      return;
    }
    varint(out, (number << 3) | 2);
    varint(out, value.length);
    out.writeBytes(value);
  }

  private static void varint(ByteArrayOutputStream out, int value) {
    while ((value & ~0x7f) != 0) {
      out.write((value & 0x7f) | 0x80);
      value >>>= 7;
    }
    out.write(value);
  }

  /** Sends {@code messages}, half-closes, and waits for the end of the call. */
  static Outcome send(ManagedChannel channel, List<byte[]> messages, long timeoutMillis)
      throws Exception {
    ClientCall<byte[], byte[]> call = channel.newCall(DO_PUT, CallOptions.DEFAULT);
    CompletableFuture<Status> done = new CompletableFuture<>();
    int[] results = {0};
    call.start(new ClientCall.Listener<>() {
      @Override
      public void onMessage(byte[] message) {
        synchronized (results) {
          results[0]++;
        }
        call.request(1);
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        done.complete(status);
      }
    }, new Metadata());
    call.request(1);
    try {
      for (byte[] m : messages) {
        if (done.isDone()) {
          break;
        }
        call.sendMessage(m);
      }
      call.halfClose();
    } catch (IllegalStateException e) {
      // the server already closed the call
    }
    Status status;
    try {
      status = done.get(timeoutMillis, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      call.cancel("test timeout", null);
      status = Status.DEADLINE_EXCEEDED.withDescription("no answer in " + timeoutMillis + " ms");
    }
    synchronized (results) {
      return new Outcome(status, results[0]);
    }
  }

  private static final java.lang.reflect.Field BB_POS;
  private static final Method OFFSET;

  static {
    try {
      BB_POS = Struct.class.getDeclaredField("bb_pos");
      BB_POS.setAccessible(true);
      OFFSET = Table.class.getDeclaredMethod("__offset", int.class);
      OFFSET.setAccessible(true);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** The position in the header array of a flatbuffer struct (a FieldNode, a Buffer). */
  static int position(Struct struct) {
    try {
      return BB_POS.getInt(struct);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The position of scalar field {@code vtableOffset} of a table, or -1 if absent. */
  static int position(Table table, int vtableOffset) {
    try {
      java.lang.reflect.Field pos = Table.class.getDeclaredField("bb_pos");
      pos.setAccessible(true);
      int o = (int) OFFSET.invoke(table, vtableOffset);
      return o == 0 ? -1 : o + pos.getInt(table);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  static void putLong(byte[] bytes, int position, long value) {
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putLong(position, value);
  }

  static void putInt(byte[] bytes, int position, int value) {
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt(position, value);
  }
}
