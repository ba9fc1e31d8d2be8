package io.storageengine.ingest;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.storageengine.common.FlightErrors;
import java.util.function.UnaryOperator;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.impl.Flight;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;

/**
 * The DoPut method of the Flight service (bound with byte-array messages): reads the first
 * message, which carries the descriptor, and hands the call to ingestion's push-based
 * {@link NativeIngestion} for a native ingest descriptor, to its {@link BulkIngestion} for a
 * Flight SQL {@code CommandStatementIngest} (once {@code bulkAdmission} admitted it), or to
 * {@code others} (Arrow Flight's own handler: Flight SQL updates) for anything else, the first
 * message included. A call without a readable descriptor goes to {@code others} too, as before.
 */
final class DoPutRouter implements ServerCallHandler<byte[], byte[]> {
  private final IngestService service;
  private final UnaryOperator<CommandStatementIngest> bulkAdmission;
  private final ServerCallHandler<byte[], byte[]> others;

  DoPutRouter(IngestService service, UnaryOperator<CommandStatementIngest> bulkAdmission,
      ServerCallHandler<byte[], byte[]> others) {
    this.service = service;
    this.bulkAdmission = bulkAdmission;
    this.others = others;
  }

  @Override
  public ServerCall.Listener<byte[]> startCall(ServerCall<byte[], byte[]> call, Metadata headers) {
    Routing routing = new Routing(call, headers);
    call.request(1); // the first message, to choose by
    return routing;
  }

  /** What the first message's descriptor asks for. */
  private sealed interface Route {}

  private record Native() implements Route {}

  private record Bulk(CommandStatementIngest command) implements Route {}

  private record Other() implements Route {}

  private static Route route(byte[] message) {
    byte[] descriptor;
    try {
      descriptor = PutMessage.parse(message).descriptor();
    } catch (RuntimeException e) {
      return new Other();
    }
    if (descriptor == null) {
      return new Other();
    }
    try {
      Flight.FlightDescriptor parsed = Flight.FlightDescriptor.parseFrom(descriptor);
      if (parsed.getType() != Flight.FlightDescriptor.DescriptorType.CMD) {
        return new Other();
      }
      byte[] command = parsed.getCmd().toByteArray();
      if (IngestProtocol.isNativeIngest(FlightDescriptor.command(command))) {
        return new Native();
      }
      // As Flight SQL's own dispatch reads it; what it cannot unpack stays its to answer.
      Any any = Any.parseFrom(command);
      return any.is(CommandStatementIngest.class)
          ? new Bulk(any.unpack(CommandStatementIngest.class)) : new Other();
    } catch (InvalidProtocolBufferException e) {
      return new Other();
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
        Route route = route(message);
        if (!(route instanceof Other)) {
          try {
            delegate = route instanceof Bulk bulk
                ? service.openBulkStream(call, bulkAdmission.apply(bulk.command()))
                : service.openNativeStream(call);
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
