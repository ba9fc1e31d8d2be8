package io.storageengine.server;

import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.server.HttpService;
import io.storageengine.auth.AuditLog;
import io.storageengine.auth.AuthMode;
import io.storageengine.auth.Credentials;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.HttpErrors;
import io.storageengine.common.SeException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;
import java.util.Optional;

/**
 * The credential of the cluster's own calls: the broker API accepts it alone ({@link #protect}),
 * servers and workers send it to the broker ({@link #value}). It is {@code --auth.cluster-token},
 * else the bootstrap token. In {@code --auth.mode none} the broker API is open; in the other modes
 * a broker without a cluster token refuses to start.
 */
public final class ClusterToken {
  private final AuthMode mode;
  private final Optional<String> token;
  private final byte[] digest;

  ClusterToken(AuthMode mode, Optional<String> token) {
    this.mode = Objects.requireNonNull(mode, "mode");
    this.token = Objects.requireNonNull(token, "token");
    this.digest = token.map(ClusterToken::sha256).orElse(null);
  }

  /** The token servers and workers send to the broker; empty when none is configured. */
  public Optional<String> value() {
    return token;
  }

  /**
   * {@code service} (the broker API) accepting only {@code Authorization: Bearer <cluster token>};
   * anything else is 401 with {@code WWW-Authenticate: Bearer}, written to the audit log without
   * the token. Mode {@code none}: {@code service} itself.
   *
   * @throws SeException INVALID_ARGUMENT in mode tokens or oidc without a cluster token
   */
  public HttpService protect(HttpService service) {
    if (mode == AuthMode.NONE) {
      return service;
    }
    if (digest == null) {
      throw SeException.invalid("se start broker with --auth.mode %s needs a cluster token: set "
          + "SE_AUTH_CLUSTER_TOKEN (or --auth.cluster-token, or the bootstrap token) on the broker, "
          + "its servers and its workers", mode.flagValue());
    }
    AuditLog audit = new AuditLog();
    return service.decorate((delegate, ctx, req) -> {
      String reason;
      try {
        String presented = Credentials.token(req.headers().get(HttpHeaderNames.AUTHORIZATION));
        if (MessageDigest.isEqual(sha256(presented), digest)) {
          return delegate.serve(ctx, req);
        }
        reason = "not the cluster token";
      } catch (SeException e) {
        reason = e.getMessage();
      }
      audit.unauthenticated("broker API: " + reason);
      HttpErrors.HttpError error = HttpErrors.engine(new SeException(ErrorCode.UNAUTHENTICATED,
          "the broker API takes the cluster token (Authorization: Bearer <SE_AUTH_CLUSTER_TOKEN>): " + reason));
      return HttpResponse.of(ResponseHeaders.builder(error.status()).contentType(MediaType.JSON_UTF_8)
          .set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer").build(), HttpData.wrap(error.body()));
    });
  }

  private static byte[] sha256(String text) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  @Override
  public String toString() {
    return "ClusterToken[" + (token.isPresent() ? "set" : "not set") + "]";
  }
}
