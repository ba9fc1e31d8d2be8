package io.storageengine.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSelector;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.proc.SecurityContext;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The issuer's public keys, fetched from its JWKS URL (configured, or the {@code jwks_uri} of
 * {@code <issuer>/.well-known/openid-configuration}) and kept for {@code maxAge}.
 *
 * <p>Key rotation: a token whose {@code kid} matches no cached key makes the set be fetched again,
 * but at most once per {@code minRefetchInterval}, so tokens with made-up key ids cannot turn the
 * engine into a load generator against the issuer. When a refresh fails the keys already known stay
 * in use; with no keys at all the failure is UNAVAILABLE. Only public asymmetric keys are kept:
 * symmetric ({@code oct}) keys and private parts in a published set are dropped.
 */
final class JwksCache implements JWKSource<SecurityContext> {
  private static final Logger LOG = LoggerFactory.getLogger(JwksCache.class);
  private static final Duration HTTP_TIMEOUT = Duration.ofSeconds(10);
  private static final int MAX_DOCUMENT_BYTES = 1 << 20;

  private final URI issuer;
  private final Optional<URI> configuredJwksUri;
  private final HttpClient http;
  private final Clock clock;
  private final Duration minRefetchInterval;
  private final Duration maxAge;

  private URI jwksUri;
  private Instant lastAttempt;
  // Written under the lock, read without it: verifying with known keys never waits for a fetch.
  private volatile JWKSet keys;
  private volatile Instant fetchedAt;

  JwksCache(URI issuer, Optional<URI> jwksUri, HttpClient http, Clock clock, Duration minRefetchInterval,
      Duration maxAge) {
    this.issuer = issuer;
    this.configuredJwksUri = jwksUri;
    this.http = http;
    this.clock = clock;
    this.minRefetchInterval = minRefetchInterval;
    this.maxAge = maxAge;
  }

  @Override
  public List<JWK> get(JWKSelector selector, SecurityContext context) throws KeySourceException {
    Instant now = clock.instant();
    JWKSet current = keys;
    if (current != null && now.isBefore(fetchedAt.plus(maxAge))) {
      List<JWK> matches = selector.select(current);
      if (!matches.isEmpty()) {
        return matches;
      }
    }
    return getOrRefresh(selector, now);
  }

  private synchronized List<JWK> getOrRefresh(JWKSelector selector, Instant now) throws KeySourceException {
    if (keys == null || !now.isBefore(fetchedAt.plus(maxAge))) {
      refreshIfAllowed(now);
    }
    List<JWK> matches = selector.select(keys);
    if (matches.isEmpty() && refreshIfAllowed(now)) {
      matches = selector.select(keys);
    }
    return matches;
  }

  /** Fetches the set unless the last attempt was less than {@code minRefetchInterval} ago; true when fetched. */
  private boolean refreshIfAllowed(Instant now) throws KeySourceException {
    if (lastAttempt != null && now.isBefore(lastAttempt.plus(minRefetchInterval))) {
      if (keys == null) {
        throw new KeySourceException("the issuer's keys could not be fetched; retrying after " + minRefetchInterval);
      }
      return false;
    }
    lastAttempt = now;
    try {
      if (jwksUri == null) {
        jwksUri = configuredJwksUri.orElseGet(this::discoverJwksUri);
      }
      JWKSet fetched = JWKSet.parse(fetch(jwksUri)).toPublicJWKSet();
      fetchedAt = now;
      keys = fetched;
      return true;
    } catch (SeException | ParseException e) {
      String reason = "cannot load the issuer's keys from " + (jwksUri == null ? issuer : jwksUri) + ": "
          + e.getMessage();
      if (keys == null) {
        throw new KeySourceException(reason, e);
      }
      LOG.warn("{}; keeping the {} keys fetched at {}", reason, keys.size(), fetchedAt);
      return false;
    }
  }

  private URI discoverJwksUri() {
    String base = issuer.toString().endsWith("/") ? issuer.toString() : issuer + "/";
    URI discovery = URI.create(base + ".well-known/openid-configuration");
    JsonNode metadata = Json.parse(fetch(discovery).getBytes(StandardCharsets.UTF_8));
    // OpenID Connect Discovery: the document must name the issuer it was fetched for.
    if (!issuer.toString().equals(metadata.path("issuer").asText())) {
      throw SeException.unavailable(discovery + " names issuer '" + metadata.path("issuer").asText()
          + "', expected " + issuer, null);
    }
    String uri = metadata.path("jwks_uri").asText("");
    if (!uri.startsWith("https://") && !uri.startsWith("http://")) {
      throw SeException.unavailable(discovery + " has no http(s) jwks_uri", null);
    }
    return URI.create(uri);
  }

  private String fetch(URI uri) {
    HttpRequest request = HttpRequest.newBuilder(uri).timeout(HTTP_TIMEOUT).header("Accept", "application/json")
        .GET().build();
    HttpResponse<byte[]> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
    } catch (IOException e) {
      throw SeException.unavailable(uri + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw SeException.unavailable(uri + ": interrupted", e);
    }
    if (response.statusCode() != 200) {
      throw SeException.unavailable(uri + " answered HTTP " + response.statusCode(), null);
    }
    if (response.body().length > MAX_DOCUMENT_BYTES) {
      throw SeException.unavailable(uri + " answered more than 1 MiB", null);
    }
    return new String(response.body(), StandardCharsets.UTF_8);
  }
}
