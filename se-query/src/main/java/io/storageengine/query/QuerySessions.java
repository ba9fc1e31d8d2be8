package io.storageengine.query;

import io.storageengine.common.LruMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Flight SQL session options by session id: {@code catalog} and {@code read} (see
 * {@link ReadMode}). The oldest sessions are forgotten beyond the configured maximum (a forgotten
 * session simply has no options).
 */
final class QuerySessions {
  private record Options(String catalog, ReadMode read) {
    boolean isEmpty() {
      return catalog == null && read == null;
    }
  }

  private final Map<String, Options> bySession;

  QuerySessions(int maxSessions) {
    this.bySession = new LruMap<>(maxSessions);
  }

  static String newSessionId() {
    return UUID.randomUUID().toString();
  }

  synchronized Optional<String> catalog(String sessionId) {
    Options options = bySession.get(sessionId);
    return Optional.ofNullable(options == null ? null : options.catalog());
  }

  synchronized Optional<ReadMode> read(String sessionId) {
    Options options = bySession.get(sessionId);
    return Optional.ofNullable(options == null ? null : options.read());
  }

  synchronized void setCatalog(String sessionId, String catalogId) {
    update(sessionId, new Options(catalogId, read(sessionId).orElse(null)));
  }

  synchronized void clearCatalog(String sessionId) {
    update(sessionId, new Options(null, read(sessionId).orElse(null)));
  }

  /** Sets the session's read mode; null clears it (queries then read {@link ReadMode#LATEST}). */
  synchronized void setRead(String sessionId, ReadMode read) {
    update(sessionId, new Options(catalog(sessionId).orElse(null), read));
  }

  synchronized boolean close(String sessionId) {
    return bySession.remove(sessionId) != null;
  }

  private void update(String sessionId, Options options) {
    if (options.isEmpty()) {
      bySession.remove(sessionId);
    } else {
      bySession.put(sessionId, options);
    }
  }
}
