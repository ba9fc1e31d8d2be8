package io.storageengine.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.DefaultJOSEObjectTypeVerifier;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWT;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.JWTParser;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import io.storageengine.common.SeException;
import java.net.URI;
import java.net.http.HttpClient;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.Date;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;

/**
 * Mode {@code oidc}: JWT access tokens of one issuer, verified with Nimbus JOSE+JWT against the
 * issuer's JWKS ({@link JwksCache}: rotation by refetching on an unknown {@code kid}, rate-limited).
 *
 * <p>A token is accepted when it is a JWS signed with one of {@link #ALGORITHMS} (asymmetric only:
 * {@code alg: none}, encrypted tokens and HMAC, which a public key could forge, are refused) by a key
 * of the set named by its {@code kid} (required), its {@code iss} equals the issuer, its {@code aud}
 * names the audience, it has {@code exp} and neither {@code exp} nor {@code nbf} are off by more than
 * the configured clock skew, and its {@code typ}, when present, is {@code JWT} or {@code at+jwt}.
 * The principal is the principal claim (a non-empty string), the groups are the string values of the
 * groups claim (a list or a single string). Refusals say why; they never repeat the token.
 */
public final class OidcAuthenticator implements Authenticator {
  /** The accepted signature algorithms: RSA PKCS#1, RSA-PSS and ECDSA. */
  public static final Set<JWSAlgorithm> ALGORITHMS = Set.of(JWSAlgorithm.RS256, JWSAlgorithm.RS384,
      JWSAlgorithm.RS512, JWSAlgorithm.PS256, JWSAlgorithm.PS384, JWSAlgorithm.PS512, JWSAlgorithm.ES256,
      JWSAlgorithm.ES384, JWSAlgorithm.ES512);
  /** The default least time between two JWKS fetches caused by unknown key ids. */
  public static final Duration DEFAULT_MIN_REFETCH_INTERVAL = Duration.ofSeconds(30);
  /** How long a fetched JWKS is used before it is fetched again anyway. */
  public static final Duration JWKS_MAX_AGE = Duration.ofMinutes(15);
  private static final int MAX_NAME_LENGTH = 256;

  private final AuthConfig.Oidc config;
  private final DefaultJWTProcessor<SecurityContext> processor = new DefaultJWTProcessor<>();

  /** An authenticator fetching keys with a default HTTP client, on the system clock. */
  public OidcAuthenticator(AuthConfig.Oidc config) {
    this(config, HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build(), Clock.systemUTC(),
        DEFAULT_MIN_REFETCH_INTERVAL);
  }

  public OidcAuthenticator(AuthConfig.Oidc config, HttpClient http, Clock clock, Duration minRefetchInterval) {
    this.config = Objects.requireNonNull(config, "config");
    URI issuer = config.issuer().orElseThrow(() -> SeException.invalid("--auth.mode oidc needs %s",
        AuthConfig.OIDC_ISSUER));
    String audience = config.audience().orElseThrow(() -> SeException.invalid("--auth.mode oidc needs %s",
        AuthConfig.OIDC_AUDIENCE));
    JwksCache keys = new JwksCache(issuer, config.jwksUri(), http, clock, minRefetchInterval, JWKS_MAX_AGE);
    processor.setJWSTypeVerifier(new DefaultJOSEObjectTypeVerifier<>(JOSEObjectType.JWT,
        new JOSEObjectType("at+jwt"), new JOSEObjectType("application/at+jwt"), null));
    processor.setJWSKeySelector(new JWSVerificationKeySelector<>(ALGORITHMS, keys));
    DefaultJWTClaimsVerifier<SecurityContext> claims = new DefaultJWTClaimsVerifier<>(Set.of(audience),
        new JWTClaimsSet.Builder().issuer(issuer.toString()).build(), Set.of("exp", config.principalClaim()),
        null) {
      @Override
      protected Date currentTime() {
        return Date.from(clock.instant());
      }
    };
    claims.setMaxClockSkew((int) config.clockSkew().toSeconds());
    processor.setJWTClaimsSetVerifier(claims);
  }

  @Override
  public Principal authenticate(String authorizationHeaderValue) {
    String token = Credentials.token(authorizationHeaderValue);
    JWT jwt;
    try {
      jwt = JWTParser.parse(token);
    } catch (ParseException e) {
      throw Credentials.unauthenticated("malformed access token: not a JWT");
    }
    if (!(jwt instanceof SignedJWT signed)) {
      throw Credentials.unauthenticated("access token refused: unsigned (alg none) and encrypted tokens are not "
          + "accepted");
    }
    JWSAlgorithm algorithm = signed.getHeader().getAlgorithm();
    if (!ALGORITHMS.contains(algorithm)) {
      throw Credentials.unauthenticated("access token refused: algorithm " + algorithm
          + " is not accepted (RS*, PS* and ES* are)");
    }
    if (signed.getHeader().getKeyID() == null) {
      throw Credentials.unauthenticated("access token refused: no kid in its header");
    }
    JWTClaimsSet claims;
    try {
      claims = processor.process(signed, null);
    } catch (KeySourceException e) {
      throw SeException.unavailable("cannot verify access tokens: " + e.getMessage(), e);
    } catch (BadJOSEException | JOSEException e) {
      throw Credentials.unauthenticated("access token refused: " + e.getMessage());
    }
    return new Principal(principalName(claims), groups(claims), false);
  }

  private String principalName(JWTClaimsSet claims) {
    Object value = claims.getClaim(config.principalClaim());
    if (!(value instanceof String name) || !isUsableName(name)) {
      throw Credentials.unauthenticated("access token refused: claim `" + config.principalClaim()
          + "` is not a name of 1 to " + MAX_NAME_LENGTH + " characters");
    }
    return name;
  }

  private Set<String> groups(JWTClaimsSet claims) {
    if (config.groupsClaim().isEmpty()) {
      return Set.of();
    }
    Object value = claims.getClaim(config.groupsClaim().get());
    Set<String> groups = new LinkedHashSet<>();
    if (value instanceof String group && isUsableName(group)) {
      groups.add(group);
    } else if (value instanceof Collection<?> list) {
      // Values that are not usable names (numbers, objects, control characters) cannot match a grant.
      for (Object item : list) {
        if (item instanceof String group && isUsableName(group)) {
          groups.add(group);
        }
      }
    }
    return groups;
  }

  private static boolean isUsableName(String name) {
    return !name.isBlank() && name.length() <= MAX_NAME_LENGTH && name.chars().noneMatch(Character::isISOControl);
  }
}
