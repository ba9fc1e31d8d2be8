package io.storageengine.query;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.LruMap;
import io.storageengine.common.SeException;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Flight SQL sessions by session id: the principal whose call opened each one, and its
 * {@code catalog} option (the only option stored). A session serves only its owner: every
 * method taking an {@code owner} throws FORBIDDEN when the session was opened by another
 * principal, worded as every refusal is and saying nothing of the session. The oldest sessions are forgotten beyond the configured maximum
 * (a forgotten or unknown session simply has no catalog, and the next call that sets an option
 * on it opens it for its caller).
 */
final class QuerySessions {
  private record Session(String owner, String catalogId) {}

  private final Map<String, Session> bySession;

  QuerySessions(int maxSessions) {
    this.bySession = new LruMap<>(maxSessions);
  }

  static String newSessionId() {
    return UUID.randomUUID().toString();
  }

  /** The catalog session {@code sessionId} selects, if any. */
  synchronized Optional<String> catalog(String sessionId, String owner) {
    return Optional.ofNullable(owned(sessionId, owner)).map(Session::catalogId);
  }

  /** Sets the catalog of {@code sessionId}, opening the session for {@code owner} if it is not known. */
  synchronized void setCatalog(String sessionId, String owner, String catalogId) {
    owned(sessionId, owner);
    bySession.put(sessionId, new Session(owner, catalogId));
  }

  /** Clears the catalog of {@code sessionId}; the session stays its owner's. */
  synchronized void clearCatalog(String sessionId, String owner) {
    if (owned(sessionId, owner) != null) {
      bySession.put(sessionId, new Session(owner, null));
    }
  }

  /** Forgets {@code sessionId}; true when it was known. */
  synchronized boolean close(String sessionId, String owner) {
    return owned(sessionId, owner) != null && bySession.remove(sessionId) != null;
  }

  /** Checks that the session is not another principal's (null when unknown). */
  private Session owned(String sessionId, String owner) {
    Session session = bySession.get(sessionId);
    if (session != null && !session.owner().equals(owner)) {
      throw refusal(owner, "this Flight SQL session");
    }
    return session;
  }

  /** The refusal of {@code principal} using {@code what} (a session, ticket or handle of another principal). */
  static SeException refusal(String principal, String what) {
    return new SeException(ErrorCode.FORBIDDEN, String.format("permission denied: principal `%s` may not use %s",
        principal, what));
  }
}
