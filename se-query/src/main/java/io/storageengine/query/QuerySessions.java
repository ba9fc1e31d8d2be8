package io.storageengine.query;

import io.storageengine.common.LruMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Flight SQL session options by session id. Only {@code catalog} is stored. The oldest sessions
 * are forgotten beyond the configured maximum (a forgotten session simply has no catalog).
 */
final class QuerySessions {
  private final Map<String, String> catalogBySession;

  QuerySessions(int maxSessions) {
    this.catalogBySession = new LruMap<>(maxSessions);
  }

  static String newSessionId() {
    return UUID.randomUUID().toString();
  }

  synchronized Optional<String> catalog(String sessionId) {
    return Optional.ofNullable(catalogBySession.get(sessionId));
  }

  synchronized void setCatalog(String sessionId, String catalogId) {
    catalogBySession.put(sessionId, catalogId);
  }

  synchronized void clearCatalog(String sessionId) {
    catalogBySession.remove(sessionId);
  }

  synchronized boolean close(String sessionId) {
    return catalogBySession.remove(sessionId) != null;
  }
}
