package io.storageengine.ingest.client;

import java.util.Objects;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CallInfo;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClientMiddleware;

/**
 * Flight client middleware sending {@code authorization: Bearer <token>} with every call, as the
 * engine's listener expects in {@code --auth.mode tokens} and {@code oidc}. {@link #toString}
 * never shows the token.
 */
public final class BearerToken implements FlightClientMiddleware.Factory {
  private final String header;

  /** Middleware for {@code token} (an API token or an OIDC access token). */
  public BearerToken(String token) {
    Objects.requireNonNull(token, "token");
    if (token.isBlank() || !token.chars().allMatch(c -> c > ' ' && c < 127)) {
      throw new IllegalArgumentException("token: expected printable ASCII without spaces");
    }
    this.header = "Bearer " + token;
  }

  @Override
  public FlightClientMiddleware onCallStarted(CallInfo info) {
    return new FlightClientMiddleware() {
      @Override
      public void onBeforeSendingHeaders(CallHeaders outgoingHeaders) {
        outgoingHeaders.insert("authorization", header);
      }

      @Override
      public void onHeadersReceived(CallHeaders incomingHeaders) {
      }

      @Override
      public void onCallCompleted(CallStatus status) {
      }
    };
  }

  @Override
  public String toString() {
    return "BearerToken[***]";
  }
}
