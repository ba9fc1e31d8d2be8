package io.storageengine.ingest;

import io.storageengine.common.FlightErrors;
import org.apache.arrow.flight.FlightProducer.StreamListener;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only writer of a stream's {@code PutResult}s. Acks arrive from flush threads in any order;
 * {@code StreamListener} is not thread-safe, so every call is serialised here, and nothing is
 * sent after the stream was ended.
 */
final class AckSender {
  private static final Logger LOG = LoggerFactory.getLogger(AckSender.class);

  private final StreamListener<PutResult> listener;
  private final BufferAllocator allocator;
  private boolean ended;

  AckSender(StreamListener<PutResult> listener, BufferAllocator allocator) {
    this.listener = listener;
    this.allocator = allocator;
  }

  /** Sends {@code {"request_id":n}}. */
  void ack(long requestId) {
    send(IngestProtocol.encodeRequestId(requestId));
  }

  /** Sends one PutResult carrying {@code metadata}. */
  synchronized void send(byte[] metadata) {
    if (ended) {
      return;
    }
    try {
      ArrowBuf buf = allocator.buffer(metadata.length);
      buf.writeBytes(metadata);
      // PutResult owns buf from here and closes it.
      try (PutResult result = PutResult.metadata(buf)) {
        listener.onNext(result);
      }
    } catch (RuntimeException e) {
      // The client went away (or the service is closing); the stream's reader ends the call.
      LOG.debug("could not send ack", e);
    }
  }

  synchronized void complete() {
    if (!ended) {
      ended = true;
      listener.onCompleted();
    }
  }

  synchronized void fail(Throwable error) {
    if (!ended) {
      ended = true;
      listener.onError(FlightErrors.toException(error));
    }
  }
}
