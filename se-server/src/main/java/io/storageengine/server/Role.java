package io.storageengine.server;

/** What a process runs. */
public enum Role {
  /** Listener only: ingestion persists to the WAL; nothing is reconciled in this process. */
  SERVER,
  /** Everything in one process with embedded defaults, reconciling continuously. */
  DEV
}
