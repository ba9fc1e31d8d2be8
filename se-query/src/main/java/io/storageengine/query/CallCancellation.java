package io.storageengine.query;

import io.grpc.Context;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * Runs an action when the current gRPC call is cancelled (its client cancelled it, its deadline
 * passed, or the client went away) while the watch is open. Closing the watch stops watching. A
 * call already cancelled runs the action at once; outside a gRPC call nothing is watched.
 *
 * <p>Two signals count: the gRPC {@link Context}'s cancellation, and the call's own state as the
 * Flight layer reports it ({@code CallContext.isCancelled()}), which the thread serving the call
 * names with {@link #serving} and a watch polls every {@value #POLL_MILLIS} ms. The HTTP/2
 * server hosting Flight does not cancel the gRPC context of a call whose client reset its
 * stream, so without the poll a query abandoned while it planned (an entity WAL tail's fold)
 * ran to its end.
 */
final class CallCancellation implements AutoCloseable {
  static final long POLL_MILLIS = 100;
  private static final ThreadLocal<BooleanSupplier> SERVING = new ThreadLocal<>();
  private static final ScheduledExecutorService POLLER = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "se-call-cancellation");
    t.setDaemon(true);
    return t;
  });

  private final Context context;
  private final Context.CancellationListener listener;
  private final ScheduledFuture<?> poll;

  private CallCancellation(Context context, Context.CancellationListener listener, ScheduledFuture<?> poll) {
    this.context = context;
    this.listener = listener;
    this.poll = poll;
  }

  static CallCancellation watch(Runnable onCancel) {
    AtomicBoolean ran = new AtomicBoolean();
    Runnable once = () -> {
      if (ran.compareAndSet(false, true)) {
        onCancel.run();
      }
    };
    Context context = Context.current();
    Context.CancellationListener listener = cancelled -> once.run();
    context.addListener(listener, Runnable::run);
    BooleanSupplier cancelled = SERVING.get();
    ScheduledFuture<?> poll = null;
    if (cancelled != null) {
      if (cancelled.getAsBoolean()) {
        once.run();
      } else {
        poll = POLLER.scheduleWithFixedDelay(() -> {
          if (!ran.get() && cancelled.getAsBoolean()) {
            once.run();
          }
        }, POLL_MILLIS, POLL_MILLIS, TimeUnit.MILLISECONDS);
      }
    }
    return new CallCancellation(context, listener, poll);
  }

  /**
   * Says that the calling thread serves a call whose cancellation {@code cancelled} reports,
   * until the returned scope is closed: watches opened meanwhile on this thread poll it.
   */
  static Scope serving(BooleanSupplier cancelled) {
    BooleanSupplier outer = SERVING.get();
    SERVING.set(cancelled);
    return () -> {
      if (outer == null) {
        SERVING.remove();
      } else {
        SERVING.set(outer);
      }
    };
  }

  /** The extent of {@link #serving}. */
  interface Scope extends AutoCloseable {
    @Override
    void close();
  }

  @Override
  public void close() {
    context.removeListener(listener);
    if (poll != null) {
      poll.cancel(false);
    }
  }
}
