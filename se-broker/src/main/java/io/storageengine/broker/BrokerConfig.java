package io.storageengine.broker;

import io.storageengine.common.SeException;
import io.storageengine.common.config.ConfigSource;
import io.storageengine.common.config.Setting;
import java.time.Duration;
import java.util.List;

/**
 * Broker settings, with defaults in one place. {@link #SETTINGS} declare the flag, variable and
 * default of the lease duration and the commit delay; {@link #from} reads them (retries keep
 * {@link RetryPolicy#defaults()}).
 *
 * @param leaseDuration how long a lease lasts without a heartbeat
 * @param commitDelay how long the committer collects changes before one write of the queue
 * @param retry bounded retries with backoff for failed and expired tasks
 */
public record BrokerConfig(Duration leaseDuration, Duration commitDelay, RetryPolicy retry) {

  public static final Setting<Duration> LEASE_DURATION = Setting.duration("broker.lease-duration", "30s",
      "how long a worker's lease on a task lasts without a heartbeat (at least 10ms)");
  public static final Setting<Duration> COMMIT_DELAY = Setting.duration("broker.commit-delay", "5ms",
      "how long the broker collects changes before one write of its queue");
  /** Every setting of the broker. */
  public static final List<Setting<?>> SETTINGS = List.of(LEASE_DURATION, COMMIT_DELAY);

  public BrokerConfig {
    if (leaseDuration.toMillis() < 10) {
      throw SeException.invalid("lease duration must be >= 10ms, got %s", leaseDuration);
    }
    if (commitDelay.isNegative()) {
      throw SeException.invalid("commit delay must be >= 0, got %s", commitDelay);
    }
  }

  public static BrokerConfig defaults() {
    return new BrokerConfig(Duration.ofSeconds(30), Duration.ofMillis(5), RetryPolicy.defaults());
  }

  /** The config given by {@link #SETTINGS} in {@code source}. */
  public static BrokerConfig from(ConfigSource source) {
    Duration lease = source.get(LEASE_DURATION);
    if (lease.toMillis() < 10) {
      throw SeException.invalid("%s: must be at least 10ms, got '%s'", LEASE_DURATION.flag(), source.text(LEASE_DURATION));
    }
    return new BrokerConfig(lease, source.get(COMMIT_DELAY), RetryPolicy.defaults());
  }

  public BrokerConfig withLeaseDuration(Duration d) {
    return new BrokerConfig(d, commitDelay, retry);
  }

  public BrokerConfig withCommitDelay(Duration d) {
    return new BrokerConfig(leaseDuration, d, retry);
  }

  public BrokerConfig withRetry(RetryPolicy r) {
    return new BrokerConfig(leaseDuration, commitDelay, r);
  }
}
