package io.storageengine.ingest;

import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.storageengine.common.FlightErrors;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.impl.Flight;

/**
 * The DoPut method of the Flight service (bound with byte-array messages): reads the first
 * message, which carries the descriptor, and hands the call to ingestion's push-based
 * {@link NativeIngestion} for a native ingest descriptor, or to {@code others} (Arrow Flight's
 * own handler: Flight SQL bulk ingest and updates) for anything else, the first message
 * included. A call without a readable descriptor goes to {@code others} too, as before.
 */
final class DoPutRouter implements ServerCallHandler<byte[], byte[]> {
  private final IngestService service;
  private final ServerCallHandler<byte[], byte[]> others;

  DoPutRouter(IngestService service, ServerCallHandler<byte[], byte[]> others) {
    this.service = service;
    this.others = others;
  }

  @Override
  public ServerCall.Listener<byte[]> startCall(ServerCall<byte[], byte[]> call, Metadata headers) {
    Routing routing = new Routing(call, headers);
    call.request(1); // the first message, to choose by
    return routing;
  }

  private static boolean isNative(byte[] message) {
    byte[] descriptor;
    try {
      descriptor = PutMessage.parse(message).descriptor();
    } catch (RuntimeException e) {
      return false;
    }
    if (descriptor == null) {
      return false;
    }
    try {
      Flight.FlightDescriptor parsed = Flight.FlightDescriptor.parseFrom(descriptor);
      return parsed.getType() == Flight.FlightDescriptor.DescriptorType.CMD
          && IngestProtocol.isNativeIngest(FlightDescriptor.command(parsed.getCmd().toByteArray()));
    } catch (InvalidProtocolBufferException e) {
      return false;
    }
  }

  private final class Routing extends ServerCall.Listener<byte[]> {
    private final ServerCall<byte[], byte[]> call;
    private final Metadata headers;
    private ServerCall.Listener<byte[]> delegate;
    private boolean ready;

    Routing(ServerCall<byte[], byte[]> call, Metadata headers) {
      this.call = call;
      this.headers = headers;
    }

    @Override
    public void onMessage(byte[] message) {
      if (delegate == null) {
        if (isNative(message)) {
          try {
            delegate = service.openNativeStream(call);
          } catch (RuntimeException e) {
            call.close(FlightErrors.toGrpcStatus(e), new Metadata());
            delegate = new ServerCall.Listener<>() {};
            return;
          }
        } else {
          start();
        }
      }
      delegate.onMessage(message);
    }

    private void start() {
      delegate = others.startCall(call, headers);
      if (ready) {
        delegate.onReady();
      }
    }

    @Override
    public void onHalfClose() {
      if (delegate == null) {
        start();
      }
      delegate.onHalfClose();
    }

    @Override
    public void onCancel() {
      if (delegate != null) {
        delegate.onCancel();
      }
    }

    @Override
    public void onComplete() {
      if (delegate != null) {
        delegate.onComplete();
      }
    }

    @Override
    public void onReady() {
      ready = true;
      if (delegate != null) {
        delegate.onReady();
      }
    }
  }
}
