package io.storageengine.server;

import io.grpc.Context;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Runs tasks with the gRPC {@link Context} of the thread that submitted them. Flight hands some
 * producer calls to its executor; without this the per-call context (the selected tenant from
 * the {@code se-query-metadata} header) would be lost on the way.
 */
final class GrpcContextExecutorService extends AbstractExecutorService {
  private final ExecutorService delegate;

  GrpcContextExecutorService(ExecutorService delegate) {
    this.delegate = delegate;
  }

  @Override
  public void execute(Runnable command) {
    delegate.execute(Context.current().wrap(command));
  }

  @Override
  public void shutdown() {
    delegate.shutdown();
  }

  @Override
  public List<Runnable> shutdownNow() {
    return delegate.shutdownNow();
  }

  @Override
  public boolean isShutdown() {
    return delegate.isShutdown();
  }

  @Override
  public boolean isTerminated() {
    return delegate.isTerminated();
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return delegate.awaitTermination(timeout, unit);
  }
}
