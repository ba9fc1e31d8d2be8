package io.storageengine.query;

import io.grpc.Context;

/**
 * Runs an action when the current gRPC call is cancelled (its client cancelled it, its deadline
 * passed, or the client went away) while the watch is open. Closing the watch stops watching. A
 * call already cancelled runs the action at once; outside a gRPC call nothing is watched.
 */
final class CallCancellation implements AutoCloseable {
  private final Context context;
  private final Context.CancellationListener listener;

  private CallCancellation(Context context, Context.CancellationListener listener) {
    this.context = context;
    this.listener = listener;
  }

  static CallCancellation watch(Runnable onCancel) {
    Context context = Context.current();
    Context.CancellationListener listener = cancelled -> onCancel.run();
    context.addListener(listener, Runnable::run);
    return new CallCancellation(context, listener);
  }

  @Override
  public void close() {
    context.removeListener(listener);
  }
}
