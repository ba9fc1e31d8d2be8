package io.storageengine.testing;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.ObjectStore;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * An {@link ObjectStore} that wraps another one and misbehaves on command, for reliability tests.
 *
 * <p>Every call goes through these steps, in this order:
 * <ol>
 *   <li>the call is counted ({@link #calls});</li>
 *   <li>during an {@linkplain #startOutage() outage} it fails with UNAVAILABLE, untouched;</li>
 *   <li>the configured {@linkplain #delay delay} is slept;</li>
 *   <li>{@linkplain #before before-hooks} run (they may block, e.g. on a latch);</li>
 *   <li>a pending {@linkplain #failNext failure} makes it fail with UNAVAILABLE, untouched;</li>
 *   <li>the delegate performs the operation;</li>
 *   <li>{@linkplain #after after-hooks} run (only when the delegate succeeded);</li>
 *   <li>a pending {@linkplain #loseResponseNext lost response} makes it fail with UNAVAILABLE
 *       although the operation <em>was</em> performed (what a timeout after a successful PUT
 *       looks like to a client).</li>
 * </ol>
 *
 * <p>The key seen by predicates and hooks is the object key, or the prefix for {@code list} and
 * {@code listChildren}.
 * Injected failures are {@code SeException(UNAVAILABLE)} whose message starts with
 * {@code "injected"}. All methods are thread-safe; faults can be programmed while other threads
 * use the store. Typical use:
 *
 * <pre>{@code
 * FaultInjectingObjectStore store = new FaultInjectingObjectStore(new MemoryObjectStore());
 * store.loseResponseNext(Operation.PUT_IF_ABSENT, 1, key -> key.endsWith(".seg"));
 * CountDownLatch release = new CountDownLatch(1);
 * try (var pause = store.after(Operation.PUT_IF_ABSENT, key -> true, (op, key) -> release.await())) {
 *   ...
 * }
 * }</pre>
 */
public final class FaultInjectingObjectStore implements ObjectStore {

  /** The operations of {@link ObjectStore}, as targets for faults and counters. */
  public enum Operation { GET, GET_RANGE, HEAD, PUT, PUT_IF_ABSENT, PUT_IF_MATCH, LIST, LIST_CHILDREN, DELETE }

  /** A callback run around an operation. It may block; an exception it throws fails the call. */
  @FunctionalInterface
  public interface Hook {
    void run(Operation operation, String key) throws Exception;
  }

  /** A registered hook; {@link #close()} removes it. */
  public interface Registration extends AutoCloseable {
    @Override
    void close();
  }

  private final ObjectStore delegate;
  private final Map<Operation, AtomicLong> counters = new EnumMap<>(Operation.class);
  private final Map<Operation, AtomicLong> delaysMillis = new EnumMap<>(Operation.class);
  private final List<CountedFault> failures = new CopyOnWriteArrayList<>();
  private final List<CountedFault> lostResponses = new CopyOnWriteArrayList<>();
  private final List<RegisteredHook> beforeHooks = new CopyOnWriteArrayList<>();
  private final List<RegisteredHook> afterHooks = new CopyOnWriteArrayList<>();
  private final AtomicBoolean outage = new AtomicBoolean();

  public FaultInjectingObjectStore(ObjectStore delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
    for (Operation op : Operation.values()) {
      counters.put(op, new AtomicLong());
      delaysMillis.put(op, new AtomicLong());
    }
  }

  /** The wrapped store, for test actors that must bypass the faults. */
  public ObjectStore delegate() {
    return delegate;
  }

  /** The next {@code times} calls of {@code operation} fail with UNAVAILABLE without effect. */
  public FaultInjectingObjectStore failNext(Operation operation, int times) {
    return failNext(operation, times, key -> true);
  }

  /** Like {@link #failNext(Operation, int)}, counting only calls whose key matches. */
  public FaultInjectingObjectStore failNext(
      Operation operation, int times, Predicate<String> keyMatches) {
    failures.add(new CountedFault(operation, keyMatches, times));
    return this;
  }

  /**
   * The next {@code times} calls of {@code operation} are performed on the delegate, then fail
   * with UNAVAILABLE, as if the response had been lost on the way back.
   */
  public FaultInjectingObjectStore loseResponseNext(Operation operation, int times) {
    return loseResponseNext(operation, times, key -> true);
  }

  /** Like {@link #loseResponseNext(Operation, int)}, counting only calls whose key matches. */
  public FaultInjectingObjectStore loseResponseNext(
      Operation operation, int times, Predicate<String> keyMatches) {
    lostResponses.add(new CountedFault(operation, keyMatches, times));
    return this;
  }

  /** Every later call of {@code operation} sleeps {@code delay} first; zero removes it. */
  public FaultInjectingObjectStore delay(Operation operation, Duration delay) {
    if (delay.isNegative()) {
      throw new IllegalArgumentException("negative delay " + delay);
    }
    delaysMillis.get(operation).set(delay.toMillis());
    return this;
  }

  /** Every later call of every operation sleeps {@code delay} first; zero removes it. */
  public FaultInjectingObjectStore delayAll(Duration delay) {
    for (Operation op : Operation.values()) {
      delay(op, delay);
    }
    return this;
  }

  /** Runs {@code hook} before every call of {@code operation} whose key matches, until closed. */
  public Registration before(Operation operation, Predicate<String> keyMatches, Hook hook) {
    return register(beforeHooks, new RegisteredHook(operation, keyMatches, hook));
  }

  /**
   * Runs {@code hook} after every successful delegate call of {@code operation} whose key
   * matches, until closed. The operation has taken effect when the hook runs.
   */
  public Registration after(Operation operation, Predicate<String> keyMatches, Hook hook) {
    return register(afterHooks, new RegisteredHook(operation, keyMatches, hook));
  }

  /** From now on every call fails with UNAVAILABLE without reaching the delegate. */
  public void startOutage() {
    outage.set(true);
  }

  /** Ends an outage started by {@link #startOutage()}. */
  public void endOutage() {
    outage.set(false);
  }

  public boolean inOutage() {
    return outage.get();
  }

  /** How many calls of {@code operation} were made, including the ones that failed. */
  public long calls(Operation operation) {
    return counters.get(operation).get();
  }

  /** How many calls were made in total. */
  public long totalCalls() {
    return counters.values().stream().mapToLong(AtomicLong::get).sum();
  }

  /** Sets every counter back to zero. */
  public void resetCounters() {
    counters.values().forEach(c -> c.set(0));
  }

  /** Removes every pending fault, delay and hook and ends any outage; counters are kept. */
  public void clearFaults() {
    failures.clear();
    lostResponses.clear();
    beforeHooks.clear();
    afterHooks.clear();
    delaysMillis.values().forEach(d -> d.set(0));
    outage.set(false);
  }

  @Override
  public Optional<Blob> get(String key) {
    return call(Operation.GET, key, () -> delegate.get(key));
  }

  @Override
  public Optional<byte[]> getRange(String key, long offset, int length) {
    return call(Operation.GET_RANGE, key, () -> delegate.getRange(key, offset, length));
  }

  @Override
  public Optional<ObjectInfo> head(String key) {
    return call(Operation.HEAD, key, () -> delegate.head(key));
  }

  @Override
  public String put(String key, byte[] data) {
    return call(Operation.PUT, key, () -> delegate.put(key, data));
  }

  @Override
  public Optional<String> putIfAbsent(String key, byte[] data) {
    return call(Operation.PUT_IF_ABSENT, key, () -> delegate.putIfAbsent(key, data));
  }

  @Override
  public Optional<String> putIfMatch(String key, byte[] data, String etag) {
    return call(Operation.PUT_IF_MATCH, key, () -> delegate.putIfMatch(key, data, etag));
  }

  @Override
  public List<ObjectInfo> list(String prefix) {
    return call(Operation.LIST, prefix, () -> delegate.list(prefix));
  }

  @Override
  public Children listChildren(String prefix) {
    return call(Operation.LIST_CHILDREN, prefix, () -> delegate.listChildren(prefix));
  }

  @Override
  public void delete(String key) {
    call(Operation.DELETE, key, () -> {
      delegate.delete(key);
      return null;
    });
  }

  @Override
  public String describe() {
    return "faults(" + delegate.describe() + ")";
  }

  @Override
  public void close() {
    delegate.close();
  }

  private <T> T call(Operation op, String key, Supplier<T> action) {
    counters.get(op).incrementAndGet();
    if (outage.get()) {
      throw injected("injected outage: %s '%s' failed", op, key);
    }
    sleep(delaysMillis.get(op).get());
    runHooks(beforeHooks, op, key);
    if (consume(failures, op, key)) {
      throw injected("injected failure: %s '%s' was not performed", op, key);
    }
    T result = action.get();
    runHooks(afterHooks, op, key);
    if (consume(lostResponses, op, key)) {
      throw injected("injected lost response: %s '%s' was performed", op, key);
    }
    return result;
  }

  private static boolean consume(List<CountedFault> faults, Operation op, String key) {
    for (CountedFault fault : faults) {
      if (fault.operation == op && fault.keyMatches.test(key) && fault.tryConsume()) {
        if (fault.remaining.get() == 0) {
          faults.remove(fault);
        }
        return true;
      }
    }
    return false;
  }

  private static void runHooks(List<RegisteredHook> hooks, Operation op, String key) {
    for (RegisteredHook h : hooks) {
      if (h.operation == op && h.keyMatches.test(key)) {
        try {
          h.hook.run(op, key);
        } catch (RuntimeException e) {
          throw e;
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw injected("injected hook interrupted: %s '%s'", op, key);
        } catch (Exception e) {
          throw new IllegalStateException("hook failed on " + op + " '" + key + "'", e);
        }
      }
    }
  }

  private static void sleep(long millis) {
    if (millis <= 0) {
      return;
    }
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SeException(ErrorCode.UNAVAILABLE, "injected delay interrupted");
    }
  }

  private static SeException injected(String fmt, Operation op, String key) {
    return new SeException(ErrorCode.UNAVAILABLE, String.format(fmt, op, key));
  }

  private static Registration register(List<RegisteredHook> hooks, RegisteredHook hook) {
    hooks.add(hook);
    return () -> hooks.remove(hook);
  }

  /** A fault that applies to the next {@code remaining} matching calls. */
  private static final class CountedFault {
    final Operation operation;
    final Predicate<String> keyMatches;
    final AtomicInteger remaining;

    CountedFault(Operation operation, Predicate<String> keyMatches, int times) {
      if (times < 0) {
        throw new IllegalArgumentException("negative count " + times);
      }
      this.operation = Objects.requireNonNull(operation, "operation");
      this.keyMatches = Objects.requireNonNull(keyMatches, "keyMatches");
      this.remaining = new AtomicInteger(times);
    }

    boolean tryConsume() {
      while (true) {
        int n = remaining.get();
        if (n <= 0) {
          return false;
        }
        if (remaining.compareAndSet(n, n - 1)) {
          return true;
        }
      }
    }
  }

  /** A hook with its filter; compared by identity so closing one registration removes only it. */
  private static final class RegisteredHook {
    final Operation operation;
    final Predicate<String> keyMatches;
    final Hook hook;

    RegisteredHook(Operation operation, Predicate<String> keyMatches, Hook hook) {
      this.operation = Objects.requireNonNull(operation, "operation");
      this.keyMatches = Objects.requireNonNull(keyMatches, "keyMatches");
      this.hook = Objects.requireNonNull(hook, "hook");
    }
  }
}
