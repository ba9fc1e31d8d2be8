package io.storageengine.broker;

import io.storageengine.common.SeException;
import java.time.Duration;

/**
 * Broker settings, with defaults in one place.
 *
 * @param leaseDuration how long a lease lasts without a heartbeat
 * @param commitDelay how long the committer collects changes before one write of the queue
 * @param retry bounded retries with backoff for failed and expired tasks
 */
public record BrokerConfig(Duration leaseDuration, Duration commitDelay, RetryPolicy retry) {

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
