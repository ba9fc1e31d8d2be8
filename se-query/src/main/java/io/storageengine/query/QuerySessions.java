package io.storageengine.query;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.LruMap;
import io.storageengine.common.SeException;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Flight SQL sessions by session id: the principal whose call opened each one, and its options
 * {@code catalog} and {@code read} (see {@link ReadMode}). A session serves only its owner: every
 * method taking an {@code owner} throws FORBIDDEN when the session was opened by another
 * principal, worded as every refusal is and saying nothing of the session. The oldest sessions are forgotten beyond the configured maximum
 * (a forgotten or unknown session simply has no options, and the next call that sets an option
 * on it opens it for its caller).
 */
final class QuerySessions {
  private record Session(String owner, String catalogId, ReadMode read) {}

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

  /** The read mode session {@code sessionId} chose, if any. */
  synchronized Optional<ReadMode> read(String sessionId, String owner) {
    return Optional.ofNullable(owned(sessionId, owner)).map(Session::read);
  }

  /** Sets the catalog of {@code sessionId}, opening the session for {@code owner} if it is not known. */
  synchronized void setCatalog(String sessionId, String owner, String catalogId) {
    Session session = owned(sessionId, owner);
    bySession.put(sessionId, new Session(owner, catalogId, session == null ? null : session.read()));
  }

  /** Clears the catalog of {@code sessionId}; the session stays its owner's. */
  synchronized void clearCatalog(String sessionId, String owner) {
    Session session = owned(sessionId, owner);
    if (session != null) {
      bySession.put(sessionId, new Session(owner, null, session.read()));
    }
  }

  /**
   * Sets the read mode of {@code sessionId} (null clears it: queries then read
   * {@link ReadMode#LATEST}), opening the session for {@code owner} if it is not known.
   */
  synchronized void setRead(String sessionId, String owner, ReadMode read) {
    Session session = owned(sessionId, owner);
    bySession.put(sessionId, new Session(owner, session == null ? null : session.catalogId(), read));
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
