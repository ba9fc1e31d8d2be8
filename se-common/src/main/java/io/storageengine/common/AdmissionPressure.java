package io.storageengine.common;

/**
 * Whether the process is admitting a burst of new ingest streams right now, so that background
 * work which may wait a little (a reconcile pass) can leave the CPU to the streams. Advisory:
 * it never blocks and never fails; the work that asks decides how long at most it waits (a
 * bounded deferral), so answering {@code true} forever can delay such work but never stop it.
 */
@FunctionalInterface
public interface AdmissionPressure {
  /** Never under pressure: nothing defers. */
  AdmissionPressure NONE = () -> false;

  /** True while a burst of stream admissions is under way; cheap, callable from any thread. */
  boolean high();
}
