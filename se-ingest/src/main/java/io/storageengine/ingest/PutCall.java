package io.storageengine.ingest;

import com.google.protobuf.ByteString;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Status;
import org.apache.arrow.flight.impl.Flight;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server side of one DoPut call as ingestion drives it: asks for the next message, sends
 * {@code PutResult}s and ends the call. gRPC's {@code ServerCall} is not thread-safe and acks
 * come from flush threads, so every call is serialised here; nothing is sent or requested after
 * the call was ended, and a call the client already abandoned swallows what is still sent.
 */
final class PutCall {
  private static final Logger LOG = LoggerFactory.getLogger(PutCall.class);

  private final ServerCall<byte[], byte[]> call;
  private boolean headersSent;
  private boolean ended;

  PutCall(ServerCall<byte[], byte[]> call) {
    this.call = call;
  }

  /** Lets the transport deliver one more message. */
  synchronized void request() {
    if (!ended) {
      call.request(1);
    }
  }

  /** Sends {@code {"request_id":n}}. */
  void ack(long requestId) {
    send(IngestProtocol.encodeRequestId(requestId));
  }

  /** Sends one PutResult carrying {@code appMetadata}. */
  synchronized void send(byte[] appMetadata) {
    if (ended) {
      return;
    }
    try {
      if (!headersSent) {
        call.sendHeaders(new Metadata());
        headersSent = true;
      }
      call.sendMessage(Flight.PutResult.newBuilder()
          .setAppMetadata(ByteString.copyFrom(appMetadata)).build().toByteArray());
    } catch (RuntimeException e) {
      // The client went away; the stream sees the cancellation and ends itself.
      LOG.debug("could not send ack", e);
    }
  }

  /** Ends the call with {@code status} (OK: every ack was sent). */
  synchronized void close(Status status) {
    if (ended) {
      return;
    }
    ended = true;
    try {
      call.close(status, new Metadata());
    } catch (RuntimeException e) {
      LOG.debug("could not close the call", e);
    }
  }
}
