package io.storageengine.ingest;

import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.storageengine.common.FlightErrors;
import io.storageengine.common.SeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks every message of a Flight DoPut call ({@link DoPutMessageCheck}) before Arrow Flight
 * sees it. For a service bound with byte-array messages (the server's listener re-marshals
 * Flight to {@code byte[]}); other calls and messages of other types pass unchanged.
 *
 * <p>The Flight handler is started only once the first message (which carries the descriptor)
 * passed, so a call without a descriptor, or with an unreadable first message, never starts a
 * producer that would wait for one. A message that fails ends the call at once with
 * INVALID_ARGUMENT naming the problem; the handler, if started, is told the call was
 * cancelled, and whatever it still sends or closes afterwards is dropped.
 */
public final class DoPutGuard implements ServerInterceptor {
  private static final Logger LOG = LoggerFactory.getLogger(DoPutGuard.class);
  static final String DO_PUT = "arrow.flight.protocol.FlightService/DoPut";

  private final long maxBatchBytes;

  /** @param maxBatchBytes the most one batch may make the server allocate beyond its body */
  public DoPutGuard(long maxBatchBytes) {
    this.maxBatchBytes = maxBatchBytes;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    if (!DO_PUT.equals(call.getMethodDescriptor().getFullMethodName())) {
      return next.startCall(call, headers);
    }
    GuardedCall<Q, R> guarded = new GuardedCall<>(call);
    GuardListener<Q, R> listener = new GuardListener<>(guarded, headers, next,
        new DoPutMessageCheck(maxBatchBytes));
    guarded.requestFirst();
    return listener;
  }

  /**
   * Drops what the handler sends or closes once the guard closed the call, and counts the first
   * message, which the guard asked for itself, against the handler's first request: the
   * handler receives exactly the messages it asked for (its flow control relies on it).
   */
  private static final class GuardedCall<Q, R> extends SimpleForwardingServerCall<Q, R> {
    private boolean closed;
    private int requestedForHandler;

    GuardedCall(ServerCall<Q, R> delegate) {
      super(delegate);
    }

    /** The first message, before the handler asks for any. */
    synchronized void requestFirst() {
      requestedForHandler = 1;
      super.request(1);
    }

    @Override
    public synchronized void request(int messages) {
      int already = Math.min(requestedForHandler, messages);
      requestedForHandler -= already;
      if (messages > already) {
        super.request(messages - already);
      }
    }

    @Override
    public synchronized void sendMessage(R message) {
      if (!closed) {
        super.sendMessage(message);
      }
    }

    @Override
    public synchronized void close(Status status, Metadata trailers) {
      if (!closed) {
        closed = true;
        super.close(status, trailers);
      }
    }

    synchronized boolean closed() {
      return closed;
    }
  }

  private static final class GuardListener<Q, R> extends ServerCall.Listener<Q> {
    private final GuardedCall<Q, R> call;
    private final Metadata headers;
    private final ServerCallHandler<Q, R> next;
    private final DoPutMessageCheck check;
    private ServerCall.Listener<Q> delegate;
    private boolean ready;
    private boolean rejected;

    GuardListener(GuardedCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next,
        DoPutMessageCheck check) {
      this.call = call;
      this.headers = headers;
      this.next = next;
      this.check = check;
    }

    @Override
    public void onMessage(Q message) {
      if (rejected) {
        return;
      }
      if (message instanceof byte[] bytes) {
        try {
          check.check(bytes);
        } catch (SeException e) {
          reject(e);
          return;
        }
      }
      if (delegate == null) {
        delegate = next.startCall(call, headers);
        if (ready) {
          delegate.onReady();
        }
      }
      delegate.onMessage(message);
    }

    private void reject(SeException e) {
      rejected = true;
      LOG.debug("DoPut rejected: {}", e.getMessage());
      call.close(FlightErrors.toGrpcStatus(e), new Metadata());
      if (delegate != null) {
        delegate.onCancel();
      }
    }

    @Override
    public void onHalfClose() {
      if (rejected) {
        return;
      }
      if (delegate == null) {
        reject(SeException.invalid("DoPut: the stream ended before its first message (the "
            + "flight_descriptor)"));
        return;
      }
      delegate.onHalfClose();
    }

    @Override
    public void onCancel() {
      if (delegate != null && !rejected) {
        delegate.onCancel();
      }
    }

    @Override
    public void onComplete() {
      if (delegate != null && !rejected) {
        delegate.onComplete();
      }
    }

    @Override
    public void onReady() {
      ready = true;
      if (delegate != null && !rejected) {
        delegate.onReady();
      }
    }
  }
}
