package io.storageengine.query;

import io.grpc.Context;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * An {@link ExecutorService} that runs each task in the gRPC {@link Context} of the thread that
 * submitted it, like {@link Context#currentContextExecutor} but with the {@code ExecutorService}
 * type {@code FlightGrpcUtils.createFlightService} requires. Flight runs {@code DoGet} on this
 * executor; without it the producer would not see {@link QueryMetadataInterceptor}'s context.
 */
public final class ContextPropagatingExecutorService extends AbstractExecutorService {
  private final ExecutorService delegate;

  public ContextPropagatingExecutorService(ExecutorService delegate) {
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
