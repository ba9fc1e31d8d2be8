package io.storageengine.auth;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;

/**
 * Turns the credentials a request carries into a {@link Principal}. One instance serves every surface
 * (HTTP, Flight, Flight SQL) of a process; implementations are thread-safe.
 */
public interface Authenticator {

  /**
   * The principal {@code authorizationHeaderValue} (an HTTP {@code Authorization} header or gRPC
   * {@code authorization} metadata value, null when absent) proves. Accepts {@code Bearer <token>} and
   * {@code Basic base64(user:token)} (the Flight handshake), see {@link Credentials#token}.
   *
   * @throws SeException UNAUTHENTICATED when the credentials are missing,
   *     malformed, unknown, revoked or expired; the message says why and never contains the token.
   *     UNAVAILABLE when the store or issuer needed to decide cannot be reached.
   */
  Principal authenticate(String authorizationHeaderValue);

  /** Mode {@code none}: every request, with or without credentials, is {@link Principal#anonymous()}. */
  static Authenticator none() {
    return header -> Principal.anonymous();
  }

  /** {@code delegate}, recording each refused request (its reason, never the token) in {@code audit}. */
  static Authenticator audited(Authenticator delegate, AuditLog audit) {
    return header -> {
      try {
        return delegate.authenticate(header);
      } catch (SeException e) {
        if (e.code() == ErrorCode.UNAUTHENTICATED) {
          audit.unauthenticated(e.getMessage());
        }
        throw e;
      }
    };
  }
}
