package io.storageengine.auth;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.LruMap;
import io.storageengine.common.SeException;
import io.storageengine.secretstore.SecretStore;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Mode {@code tokens}: principals and their opaque API tokens, kept in the {@link SecretStore}, and
 * the {@link Authenticator} that checks them.
 *
 * <p>A token is {@code se_<id>_<secret>}: a 16-hex-digit id (the lookup key, safe to log and to name
 * in a revocation) and 32 random bytes in URL-safe base64. It is returned once by
 * {@link #createToken} and never stored: {@code auth/tokens/<id>} keeps a per-token random salt and
 * SHA-256(salt || token), compared in constant time. A single fast hash is enough here, and PBKDF2 or
 * another slow hash would buy nothing: key stretching protects low-entropy passwords, while a token
 * carries 256 random bits that no amount of hashing speed lets anyone search. A slow hash would only
 * make every uncached request cost CPU, handing callers with made-up tokens a lever. The salt keeps
 * equal hashes from linking stores and defeats precomputed tables.
 *
 * <p>The bootstrap token ({@code --auth.bootstrap-token}) is held in memory as a salted hash only and
 * authenticates the principal {@value #BOOTSTRAP_PRINCIPAL}, a cluster admin by credential.
 *
 * <p>Each principal document carries a random uid that its tokens record, so deleting a principal
 * disables its tokens, and a principal created again under the same name does not inherit them.
 *
 * <p>Lookups are cached for {@code cacheTtl} (default {@value #DEFAULT_CACHE_TTL_SECONDS} s): a token
 * revoked or a principal deleted through this instance stops working here at once, one revoked
 * through another process stops working here within {@code cacheTtl}. Expiry is checked on every call.
 */
public final class TokenStore implements Authenticator {
  public static final String BOOTSTRAP_PRINCIPAL = "bootstrap";
  public static final String TOKEN_PREFIX = "se_";
  public static final long DEFAULT_CACHE_TTL_SECONDS = 10;
  private static final Pattern PRINCIPAL_NAME = Pattern.compile("[a-z0-9][a-z0-9_.-]{0,63}");
  private static final Pattern TOKEN = Pattern.compile("se_([0-9a-f]{16})_[A-Za-z0-9_-]{43}");
  private static final int SECRET_BYTES = 32;
  private static final int ID_BYTES = 8;
  private static final int SALT_BYTES = 16;
  private static final int CACHE_ENTRIES = 10_000;
  private static final String PRINCIPALS = AuthStorage.ROOT + "principals/";
  private static final String TOKENS = AuthStorage.ROOT + "tokens/";

  private final SecretStore store;
  private final Clock clock;
  private final Duration cacheTtl;
  private final SecureRandom random = new SecureRandom();
  private final byte[] bootstrapSalt;
  private final byte[] bootstrapHash;
  private final Map<String, CachedToken> cache = new LruMap<>(CACHE_ENTRIES);

  /** A token as {@link #createToken} issues it; {@code token} is shown to its owner once. */
  public record IssuedToken(String id, String principal, String token, Instant expiresAt) {
    @Override
    public String toString() {
      return "IssuedToken[id=" + id + ", principal=" + principal + ", expiresAt=" + expiresAt + "]";
    }
  }

  record PrincipalDocument(String name, String uid, String created) {}

  record TokenDocument(String id, String principal, String principalUid, String salt, String hash, String created,
      String expires) {}

  private record CachedToken(Optional<TokenDocument> token, Optional<PrincipalDocument> principal,
      Instant fetchedAt) {}

  public TokenStore(SecretStore store, Optional<String> bootstrapToken) {
    this(store, bootstrapToken, Clock.systemUTC(), Duration.ofSeconds(DEFAULT_CACHE_TTL_SECONDS));
  }

  public TokenStore(SecretStore store, Optional<String> bootstrapToken, Clock clock, Duration cacheTtl) {
    this.store = Objects.requireNonNull(store, "store");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.cacheTtl = Objects.requireNonNull(cacheTtl, "cacheTtl");
    if (bootstrapToken.isPresent()) {
      bootstrapSalt = randomBytes(SALT_BYTES);
      bootstrapHash = hash(bootstrapSalt, bootstrapToken.get());
    } else {
      bootstrapSalt = null;
      bootstrapHash = null;
    }
  }

  /** Creates principal {@code name} (1 to 64 of {@code a-z 0-9 _ . -}); ALREADY_EXISTS when it exists. */
  public void createPrincipal(String name) {
    checkPrincipalName(name);
    PrincipalDocument document = new PrincipalDocument(name, HexFormat.of().formatHex(randomBytes(ID_BYTES)),
        clock.instant().toString());
    if (!store.create(PRINCIPALS + name, AuthStorage.write(document))) {
      throw new SeException(ErrorCode.ALREADY_EXISTS, "principal `" + name + "` already exists");
    }
  }

  /** True when principal {@code name} exists. */
  public boolean principalExists(String name) {
    return findPrincipal(name).isPresent();
  }

  /** Deletes principal {@code name}; its tokens stop working. NOT_FOUND when there is none. */
  public void deletePrincipal(String name) {
    if (!principalExists(name)) {
      throw SeException.notFound("no principal `%s`", name);
    }
    store.delete(PRINCIPALS + name);
    synchronized (cache) {
      cache.values().removeIf(c -> c.token().map(t -> t.principal().equals(name)).orElse(false));
    }
  }

  /**
   * Issues a token for {@code principal}, valid for {@code expiresIn} (an ISO-8601 duration such as
   * {@code P30D} or {@code PT12H}). NOT_FOUND when the principal does not exist.
   */
  public IssuedToken createToken(String principal, String expiresIn) {
    return createToken(principal, parseExpiresIn(expiresIn));
  }

  /** Issues a token for {@code principal}, valid for {@code expiresIn}. */
  public IssuedToken createToken(String principal, Duration expiresIn) {
    if (expiresIn.isNegative() || expiresIn.isZero()) {
      throw SeException.invalid("expires_in: must be positive, got %s", expiresIn);
    }
    PrincipalDocument owner = findPrincipal(principal)
        .orElseThrow(() -> SeException.notFound("no principal `%s`", principal));
    Instant now = clock.instant();
    Instant expires = now.plus(expiresIn);
    while (true) {
      String id = HexFormat.of().formatHex(randomBytes(ID_BYTES));
      String token = TOKEN_PREFIX + id + "_" + Base64.getUrlEncoder().withoutPadding()
          .encodeToString(randomBytes(SECRET_BYTES));
      byte[] salt = randomBytes(SALT_BYTES);
      TokenDocument document = new TokenDocument(id, principal, owner.uid(), Base64.getEncoder().encodeToString(salt),
          Base64.getEncoder().encodeToString(hash(salt, token)), now.toString(), expires.toString());
      if (store.create(TOKENS + id, AuthStorage.write(document))) {
        return new IssuedToken(id, principal, token, expires);
      }
      // An id collision (2^-64 per pair): draw again.
    }
  }

  /** Revokes token {@code id} of {@code principal}; NOT_FOUND when the principal has no such token. */
  public void revokeToken(String principal, String id) {
    Optional<TokenDocument> token = id.matches("[0-9a-f]{16}")
        ? AuthStorage.read(store, TOKENS + id, TokenDocument.class) : Optional.empty();
    if (token.isEmpty() || !token.get().principal().equals(principal)) {
      throw SeException.notFound("principal `%s` has no token `%s`", principal, id);
    }
    store.delete(TOKENS + id);
    synchronized (cache) {
      cache.remove(id);
    }
  }

  @Override
  public Principal authenticate(String authorizationHeaderValue) {
    String token = Credentials.token(authorizationHeaderValue);
    if (bootstrapHash != null && MessageDigest.isEqual(hash(bootstrapSalt, token), bootstrapHash)) {
      return new Principal(BOOTSTRAP_PRINCIPAL, Set.of(), true);
    }
    Matcher m = TOKEN.matcher(token);
    if (!m.matches()) {
      throw Credentials.unauthenticated("malformed token: expected an API token (" + TOKEN_PREFIX + "...)");
    }
    String id = m.group(1);
    CachedToken found = lookup(id);
    TokenDocument document = found.token().orElse(null);
    if (document == null || !MessageDigest.isEqual(hash(Base64.getDecoder().decode(document.salt()), token),
        Base64.getDecoder().decode(document.hash()))) {
      throw Credentials.unauthenticated("unknown or revoked token " + id);
    }
    if (found.principal().map(p -> !p.uid().equals(document.principalUid())).orElse(true)) {
      throw Credentials.unauthenticated("token " + id + ": its principal was deleted");
    }
    Instant expires = Instant.parse(document.expires());
    if (!clock.instant().isBefore(expires)) {
      throw Credentials.unauthenticated("token " + id + " expired at " + expires);
    }
    return new Principal(document.principal(), Set.of(), false);
  }

  /** Parses an ISO-8601 duration ({@code P30D}, {@code PT12H}) as the token API's {@code expires_in}. */
  public static Duration parseExpiresIn(String text) {
    try {
      return Duration.parse(text);
    } catch (DateTimeParseException | NullPointerException e) {
      throw SeException.invalid("expires_in: expected an ISO-8601 duration such as P30D or PT12H, got '%s'", text);
    }
  }

  private CachedToken lookup(String id) {
    Instant now = clock.instant();
    synchronized (cache) {
      CachedToken cached = cache.get(id);
      if (cached != null && now.isBefore(cached.fetchedAt().plus(cacheTtl))) {
        return cached;
      }
    }
    Optional<TokenDocument> token = AuthStorage.read(store, TOKENS + id, TokenDocument.class);
    Optional<PrincipalDocument> principal = token.flatMap(t -> findPrincipal(t.principal()));
    CachedToken fetched = new CachedToken(token, principal, now);
    synchronized (cache) {
      cache.put(id, fetched);
    }
    return fetched;
  }

  /** The principal named {@code name}; empty also for names that cannot be principals (no store key for them). */
  private Optional<PrincipalDocument> findPrincipal(String name) {
    if (name == null || !PRINCIPAL_NAME.matcher(name).matches()) {
      return Optional.empty();
    }
    return AuthStorage.read(store, PRINCIPALS + name, PrincipalDocument.class);
  }

  private static void checkPrincipalName(String name) {
    if (name == null || !PRINCIPAL_NAME.matcher(name).matches()) {
      throw SeException.invalid("principal name '%s': expected 1 to 64 of a-z, 0-9, _, . and -, starting with a "
          + "letter or digit", name);
    }
    if (name.equals(BOOTSTRAP_PRINCIPAL)) {
      throw SeException.invalid("principal name '%s' is reserved for the bootstrap token", name);
    }
  }

  private static byte[] hash(byte[] salt, String token) {
    return AuthStorage.sha256(salt, token.getBytes(UTF_8));
  }

  private byte[] randomBytes(int n) {
    byte[] bytes = new byte[n];
    random.nextBytes(bytes);
    return bytes;
  }
}
