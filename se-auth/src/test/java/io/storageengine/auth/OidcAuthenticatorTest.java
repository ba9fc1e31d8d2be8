package io.storageengine.auth;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** OIDC verification against an issuer the test serves itself: discovery document and JWKS. */
class OidcAuthenticatorTest {
  private static final String AUDIENCE = "storage-engine";
  private static final Duration MIN_REFETCH = Duration.ofSeconds(30);

  private final TestingClock clock = new TestingClock(Instant.parse("2026-12-01T10:00:00Z"));
  private final AtomicInteger jwksFetches = new AtomicInteger();
  private volatile JWKSet published;
  private volatile int jwksStatus = 200;
  private HttpServer server;
  private String issuer;
  private RSAKey rsaKey;
  private ECKey ecKey;
  private OidcAuthenticator authenticator;

  @BeforeEach
  void startIssuer() throws Exception {
    rsaKey = new RSAKeyGenerator(2048).keyID("rsa-1").generate();
    ecKey = new ECKeyGenerator(Curve.P_256).keyID("ec-1").generate();
    published = new JWKSet(List.of(rsaKey, ecKey));
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    issuer = "http://127.0.0.1:" + server.getAddress().getPort() + "/realms/lake";
    server.createContext("/realms/lake/.well-known/openid-configuration", exchange -> respond(exchange, 200,
        "{\"issuer\":\"" + issuer + "\",\"jwks_uri\":\"" + issuer + "/certs\"}"));
    server.createContext("/realms/lake/certs", exchange -> {
      jwksFetches.incrementAndGet();
      // Published sets hold public keys only; toString(true) would leak nothing else either.
      respond(exchange, jwksStatus, published.toString(true));
    });
    server.start();
    authenticator = authenticator(Optional.empty(), Optional.of("groups"));
  }

  @AfterEach
  void stopIssuer() {
    server.stop(0);
  }

  @Test
  void acceptsAValidTokenAndReadsPrincipalAndGroups() throws Exception {
    String token = sign(rsaKey, JWSAlgorithm.RS256, claims().claim("groups", List.of("analysts", "loaders")).build());
    assertThat(authenticator.authenticate("Bearer " + token))
        .isEqualTo(new Principal("alice", Set.of("analysts", "loaders"), false));
    String ecToken = sign(ecKey, JWSAlgorithm.ES256, claims().claim("groups", "analysts").build());
    assertThat(authenticator.authenticate("Bearer " + ecToken))
        .isEqualTo(new Principal("alice", Set.of("analysts"), false));
    String basic = Base64.getEncoder().encodeToString(("alice:" + token).getBytes(UTF_8));
    assertThat(authenticator.authenticate("Basic " + basic).name()).isEqualTo("alice");
    assertThat(jwksFetches).hasValue(1);
  }

  @Test
  void usesAConfiguredJwksUriWithoutDiscoveryAndOtherClaims() throws Exception {
    server.removeContext("/realms/lake/.well-known/openid-configuration");
    OidcAuthenticator configured = new OidcAuthenticator(new AuthConfig.Oidc(Optional.of(URI.create(issuer)),
        Optional.of(URI.create(issuer + "/certs")), Optional.of(AUDIENCE), "preferred_username", Optional.empty(),
        Duration.ofSeconds(60)), HttpClient.newHttpClient(), clock, MIN_REFETCH);
    String token = sign(rsaKey, JWSAlgorithm.RS256, claims().claim("preferred_username", "alice@example.com")
        .claim("groups", List.of("ignored")).build());
    assertThat(configured.authenticate("Bearer " + token))
        .isEqualTo(new Principal("alice@example.com", Set.of(), false));
  }

  @Test
  void followsKeyRotationWithRateLimitedRefetches() throws Exception {
    authenticator.authenticate("Bearer " + sign(rsaKey, JWSAlgorithm.RS256, claims().build()));
    RSAKey rotated = new RSAKeyGenerator(2048).keyID("rsa-2").generate();
    published = new JWKSet(List.of(rotated, ecKey));
    clock.advance(MIN_REFETCH);

    // A token signed with the new key: its kid is unknown, so the set is fetched again.
    assertThat(authenticator.authenticate("Bearer " + sign(rotated, JWSAlgorithm.RS256, claims().build())).name())
        .isEqualTo("alice");
    assertThat(jwksFetches).hasValue(2);
    // The retired key is gone from the set.
    assertRefused(sign(rsaKey, JWSAlgorithm.RS256, claims().build()),
        "access token refused: Signed JWT rejected: Another algorithm expected, or no matching key(s) found");
    // Unknown key ids within the refetch interval do not reach the issuer again.
    RSAKey unknown = new RSAKeyGenerator(2048).keyID("rsa-made-up").generate();
    for (int i = 0; i < 3; i++) {
      assertRefused(sign(unknown, JWSAlgorithm.RS256, claims().build()),
          "access token refused: Signed JWT rejected: Another algorithm expected, or no matching key(s) found");
    }
    assertThat(jwksFetches).hasValue(2);
    clock.advance(MIN_REFETCH);
    assertRefused(sign(unknown, JWSAlgorithm.RS256, claims().build()),
        "access token refused: Signed JWT rejected: Another algorithm expected, or no matching key(s) found");
    assertThat(jwksFetches).hasValue(3);
  }

  @Test
  void refusesWrongIssuerAndWrongAudience() throws Exception {
    assertRefused(sign(rsaKey, JWSAlgorithm.RS256, claims().issuer("https://evil.example").build()),
        "access token refused: JWT iss claim value rejected");
    assertRefused(sign(rsaKey, JWSAlgorithm.RS256, claims().audience("another-app").build()),
        "access token refused: JWT aud claim rejected");
    assertRefused(sign(rsaKey, JWSAlgorithm.RS256, claims().audience((String) null).build()),
        "access token refused: JWT missing required aud claim");
  }

  @Test
  void boundsExpiryAndNotBeforeByTheClockSkew() throws Exception {
    Instant now = clock.instant();
    String expiredWithinSkew = sign(rsaKey, JWSAlgorithm.RS256,
        claims().expirationTime(Date.from(now.minusSeconds(30))).build());
    assertThat(authenticator.authenticate("Bearer " + expiredWithinSkew).name()).isEqualTo("alice");
    assertRefused(sign(rsaKey, JWSAlgorithm.RS256, claims().expirationTime(Date.from(now.minusSeconds(90))).build()),
        "access token refused: Expired JWT");
    assertRefused(sign(rsaKey, JWSAlgorithm.RS256, claims().notBeforeTime(Date.from(now.plusSeconds(300))).build()),
        "access token refused: JWT before use time");
    assertRefused(sign(rsaKey, JWSAlgorithm.RS256, claims().expirationTime(null).build()),
        "access token refused: JWT missing required claims: [exp]");
  }

  @Test
  void refusesUnsignedHmacAndKidlessTokens() throws Exception {
    String none = new PlainJWT(claims().build()).serialize();
    assertThat(none).endsWith(".");
    assertRefused(none, "access token refused: unsigned (alg none) and encrypted tokens are not accepted");

    // The classic confusion attack: HS256 with the issuer's public key as the HMAC secret.
    SignedJWT hmac = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).keyID(rsaKey.getKeyID()).build(),
        claims().build());
    hmac.sign(new MACSigner(rsaKey.toRSAPublicKey().getEncoded()));
    assertRefused(hmac.serialize(), "access token refused: algorithm HS256 is not accepted (RS*, PS* and ES* are)");

    SignedJWT kidless = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).build(), claims().build());
    kidless.sign(new RSASSASigner(rsaKey));
    assertRefused(kidless.serialize(), "access token refused: no kid in its header");

    assertRefused("not-a-jwt", "malformed access token: not a JWT");
  }

  @Test
  void ignoresSymmetricKeysInThePublishedSet() throws Exception {
    byte[] secret = new byte[32];
    OctetSequenceKey oct = new OctetSequenceKey.Builder(secret).keyID("oct-1").build();
    published = new JWKSet(List.<JWK>of(rsaKey, oct));
    OidcAuthenticator fresh = authenticator(Optional.empty(), Optional.empty());
    SignedJWT hmac = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).keyID("oct-1").build(), claims().build());
    hmac.sign(new MACSigner(secret));
    assertThatThrownBy(() -> fresh.authenticate("Bearer " + hmac.serialize()))
        .hasMessage("access token refused: algorithm HS256 is not accepted (RS*, PS* and ES* are)");
    assertThat(fresh.authenticate("Bearer " + sign(rsaKey, JWSAlgorithm.RS256, claims().build())).name())
        .isEqualTo("alice");
  }

  @Test
  void refusesTokensWithoutAUsablePrincipalClaim() throws Exception {
    assertRefused(sign(rsaKey, JWSAlgorithm.RS256, claims().subject(null).build()),
        "access token refused: JWT missing required claims: [sub]");
    assertRefused(sign(rsaKey, JWSAlgorithm.RS256, claims().subject(" ").build()),
        "access token refused: claim `sub` is not a name of 1 to 256 characters");
    String odd = sign(rsaKey, JWSAlgorithm.RS256, claims().claim("groups", List.of("ok", 7, "bad\ngroup")).build());
    assertThat(authenticator.authenticate("Bearer " + odd).groups()).containsExactly("ok");
  }

  @Test
  void anUnreachableIssuerIsUnavailableNotUnauthenticated() throws Exception {
    jwksStatus = 503;
    String token = sign(rsaKey, JWSAlgorithm.RS256, claims().build());
    assertThatThrownBy(() -> authenticator.authenticate("Bearer " + token))
        .isInstanceOf(SeException.class)
        .hasMessage("cannot verify access tokens: cannot load the issuer's keys from " + issuer + "/certs: "
            + issuer + "/certs answered HTTP 503")
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE))
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain(token));
    // Within the refetch interval the issuer is not asked again.
    assertThatThrownBy(() -> authenticator.authenticate("Bearer " + token))
        .hasMessage("cannot verify access tokens: the issuer's keys could not be fetched; retrying after PT30S");
    jwksStatus = 200;
    clock.advance(MIN_REFETCH);
    assertThat(authenticator.authenticate("Bearer " + token).name()).isEqualTo("alice");
  }

  private OidcAuthenticator authenticator(Optional<URI> jwksUri, Optional<String> groupsClaim) {
    return new OidcAuthenticator(new AuthConfig.Oidc(Optional.of(URI.create(issuer)), jwksUri, Optional.of(AUDIENCE),
        "sub", groupsClaim, Duration.ofSeconds(60)), HttpClient.newHttpClient(), clock, MIN_REFETCH);
  }

  private JWTClaimsSet.Builder claims() {
    Instant now = clock.instant();
    return new JWTClaimsSet.Builder().issuer(issuer).audience(AUDIENCE).subject("alice")
        .issueTime(Date.from(now)).expirationTime(Date.from(now.plusSeconds(300)));
  }

  private static String sign(JWK key, JWSAlgorithm algorithm, JWTClaimsSet claims) throws Exception {
    SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(algorithm).keyID(key.getKeyID()).type(JOSEObjectType.JWT)
        .build(), claims);
    jwt.sign(key instanceof ECKey ec ? new ECDSASigner(ec) : new RSASSASigner((RSAKey) key));
    return jwt.serialize();
  }

  private void assertRefused(String token, String message) {
    assertThatThrownBy(() -> authenticator.authenticate("Bearer " + token))
        .isInstanceOf(SeException.class)
        .hasMessage(message)
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.UNAUTHENTICATED))
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain(token));
  }

  private static void respond(HttpExchange exchange, int status, String body) throws IOException {
    try (exchange) {
      byte[] bytes = body.getBytes(UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(status, bytes.length);
      exchange.getResponseBody().write(bytes);
    }
  }
}
