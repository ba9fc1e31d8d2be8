package io.storageengine.broker;

/**
 * Runs one kind of task on a worker. Returning normally acknowledges success; throwing
 * acknowledges failure with the exception's message as the reason (the broker retries with
 * backoff until the attempts run out). A task may run more than once (a lease can expire while
 * its worker is slow or dead), so handlers must be idempotent; reconciliation is.
 * An interrupt means the worker is stopping: give up promptly.
 */
@FunctionalInterface
public interface TaskHandler {
  void run(Task task) throws Exception;
}
