package io.storageengine.server;

import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.ServiceRequestContext;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.netty.util.AttributeKey;
import io.storageengine.auth.AccessAdministration;
import io.storageengine.auth.Action;
import io.storageengine.auth.AuditLog;
import io.storageengine.auth.AuthConfig;
import io.storageengine.auth.AuthMode;
import io.storageengine.auth.Authenticator;
import io.storageengine.auth.Authorizer;
import io.storageengine.auth.Credentials;
import io.storageengine.auth.GrantStore;
import io.storageengine.auth.OidcAuthenticator;
import io.storageengine.auth.Principal;
import io.storageengine.auth.TokenStore;
import io.storageengine.catalog.TenantCatalogs;
import io.storageengine.common.ClientError;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.HttpErrors;
import io.storageengine.common.SeException;
import io.storageengine.secretstore.SecretStore;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who is calling and what they may touch, for every surface of a process: one authenticator and
 * one authorizer built from {@link AuthConfig}, one HTTP decorator ({@link #decorate}) and one gRPC
 * interceptor ({@link #flightInterceptor}) that establish the caller, and {@link #require}, the
 * one decision each surface asks with (principal, catalog, action).
 *
 * <p>Authentication: every HTTP route except {@link #OPEN_PATHS} and every gRPC call (Flight,
 * Flight SQL, the {@code Handshake}) needs {@code Authorization: Bearer <token>} (the handshake
 * also takes {@code Basic base64(user:token)} and answers with {@code authorization: Bearer
 * <token>}, as Flight clients expect). Missing or bad credentials answer HTTP 401 with
 * {@code WWW-Authenticate: Bearer} or gRPC {@code UNAUTHENTICATED}; the reason goes to the audit
 * log, the token nowhere. In mode {@code none} every caller is {@link Principal#anonymous()}.
 */
public final class Access {
  private static final Logger LOG = LoggerFactory.getLogger(Access.class);
  /** Routes answered without credentials: the liveness probe load balancers and orchestrators call. */
  public static final Set<String> OPEN_PATHS = Set.of("/health");

  private static final Context.Key<Principal> FLIGHT_CALLER = Context.key("se-principal");
  private static final AttributeKey<Principal> HTTP_CALLER = AttributeKey.valueOf(Access.class, "principal");
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final String HANDSHAKE = "arrow.flight.protocol.FlightService/Handshake";

  private final AuthMode mode;
  private final Authenticator authenticator;
  private final Authorizer authorizer;
  private final AccessAdministration administration;
  private final GrantStore grants;

  private Access(AuthMode mode, Authenticator authenticator, Authorizer authorizer,
      AccessAdministration administration, GrantStore grants) {
    this.mode = mode;
    this.authenticator = authenticator;
    this.authorizer = authorizer;
    this.administration = administration;
    this.grants = grants;
  }

  /** Access as {@code config} sets it up; tokens and grants live in {@code secrets}. */
  public static Access open(AuthConfig config, SecretStore secrets) {
    AuditLog audit = new AuditLog();
    GrantStore grants = new GrantStore(secrets);
    Authorizer authorizer = new Authorizer(grants, audit);
    Optional<TokenStore> tokens = config.mode() == AuthMode.TOKENS
        ? Optional.of(new TokenStore(secrets, config.bootstrapToken())) : Optional.empty();
    Authenticator authenticator = switch (config.mode()) {
      case NONE -> Authenticator.none();
      case TOKENS -> tokens.orElseThrow();
      // The bootstrap token is the first admin in oidc mode too: grants to the issuer's
      // subjects and groups have to be made by someone.
      case OIDC -> withBootstrap(new OidcAuthenticator(config.oidc()), config.bootstrapToken());
    };
    LOG.info("authentication: {}", config);
    return new Access(config.mode(), Authenticator.audited(authenticator, audit), authorizer,
        new AccessAdministration(tokens, grants, authorizer, audit), grants);
  }

  /** {@code delegate}, except that the bootstrap token (compared as a hash, in constant time) is the bootstrap admin. */
  private static Authenticator withBootstrap(Authenticator delegate, Optional<String> bootstrapToken) {
    if (bootstrapToken.isEmpty()) {
      return delegate;
    }
    byte[] expected = sha256(bootstrapToken.get());
    Principal bootstrap = new Principal(TokenStore.BOOTSTRAP_PRINCIPAL, Set.of(), true);
    return header -> {
      String token = Credentials.token(header);
      return MessageDigest.isEqual(sha256(token), expected) ? bootstrap : delegate.authenticate(header);
    };
  }

  private static byte[] sha256(String text) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  public AuthMode mode() {
    return mode;
  }

  /** The principal {@code authorizationHeaderValue} proves (see {@link Authenticator#authenticate}). */
  public Principal authenticate(String authorizationHeaderValue) {
    return authenticator.authenticate(authorizationHeaderValue);
  }

  /**
   * Returns when {@code principal} may perform {@code action} on {@code catalogId} (null for
   * cluster-wide admin actions). Reads grants only: the refusal (FORBIDDEN) is worded the same
   * whether or not the catalog exists.
   */
  public void require(Principal principal, String catalogId, Action action) {
    authorizer.require(principal, catalogId, action);
  }

  /** The admin operations (principals, tokens, grants), each checked and audited. */
  public AccessAdministration administration() {
    return administration;
  }

  /** Drops every grant on a deleted catalog, so a new catalog of that name starts without any. */
  public void catalogDeleted(String catalogId) {
    grants.revokeAll(catalogId);
  }

  // ---------------------------------------------------------------- HTTP

  /**
   * {@code service} behind authentication: the caller is established (off the event loop: token
   * and key look-ups may block) before {@code service} sees the request, and is then
   * {@link #httpCaller}. Paths in {@link #OPEN_PATHS} pass without credentials.
   */
  public HttpService decorate(HttpService service) {
    return service.decorate((delegate, ctx, req) -> {
      if (OPEN_PATHS.contains(ctx.path())) {
        return delegate.serve(ctx, req);
      }
      if (mode == AuthMode.NONE) {
        // Nothing to look up: no hop to the blocking executor.
        ctx.setAttr(HTTP_CALLER, Principal.anonymous());
        return delegate.serve(ctx, req);
      }
      String header = req.headers().get(HttpHeaderNames.AUTHORIZATION);
      CompletableFuture<HttpResponse> response = CompletableFuture.supplyAsync(() -> authenticate(header),
          ctx.blockingTaskExecutor()).handleAsync((principal, failure) -> {
            if (failure != null) {
              return refusal(ctx, failure instanceof CompletionException && failure.getCause() != null
                  ? failure.getCause() : failure);
            }
            ctx.setAttr(HTTP_CALLER, principal);
            try {
              return delegate.serve(ctx, req);
            } catch (Exception e) {
              return refusal(ctx, e);
            }
          }, ctx.eventLoop());
      return HttpResponse.of(response);
    });
  }

  /**
   * {@code service} for cluster admins only (the caller as {@link #decorate}, applied outside,
   * established it): others get 403. For routes with no catalog of their own ({@code /metrics}).
   */
  public HttpService adminOnly(HttpService service) {
    return service.decorate((delegate, ctx, req) -> {
      try {
        require(httpCaller(ctx), null, Action.ADMIN);
      } catch (SeException e) {
        return refusal(ctx, e);
      }
      return delegate.serve(ctx, req);
    });
  }

  /** The caller of the HTTP request of {@code ctx}, as {@link #decorate} established it. */
  public static Principal httpCaller(ServiceRequestContext ctx) {
    Principal principal = ctx.attr(HTTP_CALLER);
    if (principal == null) {
      // A route reached without the decorator: refuse rather than act for nobody.
      throw new SeException(ErrorCode.UNAUTHENTICATED, "no credentials: send Authorization: Bearer <token>");
    }
    return principal;
  }

  private static HttpResponse refusal(ServiceRequestContext ctx, Throwable failure) {
    HttpErrors.HttpError error = isIcebergRest(ctx.path()) ? HttpErrors.iceberg(failure) : HttpErrors.engine(failure);
    com.linecorp.armeria.common.ResponseHeadersBuilder headers = ResponseHeaders.builder(error.status()).contentType(MediaType.JSON_UTF_8);
    if (error.status() == HttpStatus.UNAUTHORIZED.code()) {
      headers.set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer");
    }
    return HttpResponse.of(headers.build(), HttpData.wrap(error.body()));
  }

  /** Each tenant's Iceberg REST base URI answers in Iceberg's error model. */
  private static boolean isIcebergRest(String path) {
    return path.matches("/catalogs/[^/]+/v1(/.*)?");
  }

  // ---------------------------------------------------------------- gRPC

  /**
   * The gRPC interceptor establishing the caller of every Flight and Flight SQL call
   * ({@link #flightCaller}); calls without valid credentials are closed UNAUTHENTICATED before the
   * producer sees them. A successful {@code Handshake} answers with the bearer token to send.
   */
  public ServerInterceptor flightInterceptor() {
    return new ServerInterceptor() {
      @Override
      public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
          ServerCallHandler<ReqT, RespT> next) {
        String header = headers.get(AUTHORIZATION);
        Principal principal;
        try {
          principal = authenticate(header);
        } catch (RuntimeException e) {
          ClientError error = ClientError.of(e);
          Status status = error.code() == ErrorCode.UNAUTHENTICATED ? Status.UNAUTHENTICATED
              : error.code() == ErrorCode.UNAVAILABLE ? Status.UNAVAILABLE : Status.INTERNAL;
          call.close(status.withDescription(error.message()), new Metadata());
          return new ServerCall.Listener<>() {};
        }
        ServerCall<ReqT, RespT> answered = call;
        if (HANDSHAKE.equals(call.getMethodDescriptor().getFullMethodName()) && header != null && mode != AuthMode.NONE) {
          String token = Credentials.token(header);
          answered = new SimpleForwardingServerCall<>(call) {
            @Override
            public void sendHeaders(Metadata responseHeaders) {
              responseHeaders.put(AUTHORIZATION, "Bearer " + token);
              super.sendHeaders(responseHeaders);
            }
          };
        }
        return Contexts.interceptCall(Context.current().withValue(FLIGHT_CALLER, principal), answered, headers, next);
      }
    };
  }

  /**
   * The caller of the current gRPC call, as {@link #flightInterceptor} established it.
   *
   * @throws SeException UNAUTHENTICATED outside an intercepted call (fail closed)
   */
  public static Principal flightCaller() {
    return currentFlightCaller().orElseThrow(() -> new SeException(ErrorCode.UNAUTHENTICATED,
        "no credentials: send Authorization: Bearer <token>"));
  }

  private static Optional<Principal> currentFlightCaller() {
    return Optional.ofNullable(FLIGHT_CALLER.get());
  }

  /**
   * {@code catalogs} as the current gRPC caller may use them for {@code action}: looking up a
   * catalog inside a call requires {@code action} on it. Work outside a call (group commits on
   * the committer's threads, acting for requests already checked) looks up unchecked.
   */
  public TenantCatalogs forCallers(TenantCatalogs catalogs, Action action) {
    Objects.requireNonNull(catalogs, "catalogs");
    return catalogId -> {
      currentFlightCaller().ifPresent(principal -> require(principal, catalogId, action));
      return catalogs.catalog(catalogId);
    };
  }
}
