package io.storageengine.common.telemetry;

import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SpanProcessor;
import java.util.function.Consumer;

/**
 * A span processor that hands every span to {@code onEnd} as it ends, on the thread that ended
 * it, and ignores starts: for tests that check which spans the engine produced and for local
 * diagnostics. {@code onEnd} must be quick and thread-safe.
 */
public final class EndedSpanListener implements SpanProcessor {
  private final Consumer<ReadableSpan> onEnd;

  public EndedSpanListener(Consumer<ReadableSpan> onEnd) {
    this.onEnd = onEnd;
  }

  @Override
  public void onStart(Context parentContext, ReadWriteSpan span) {}

  @Override
  public boolean isStartRequired() {
    return false;
  }

  @Override
  public void onEnd(ReadableSpan span) {
    onEnd.accept(span);
  }

  @Override
  public boolean isEndRequired() {
    return true;
  }
}
