package io.storageengine.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TokenStoreTest {
  private static final String BOOTSTRAP = "bootstrap-0123456789abcdef0123456789";
  private static final Duration CACHE_TTL = Duration.ofSeconds(10);

  private final TestingClock clock = new TestingClock(Instant.parse("2026-12-01T10:00:00Z"));
  private final RecordingSecretStore secrets = new RecordingSecretStore();
  private final TokenStore tokens = new TokenStore(secrets, Optional.of(BOOTSTRAP), clock, CACHE_TTL);

  @Test
  void issuesATokenThatAuthenticatesItsPrincipal() {
    tokens.createPrincipal("etl");
    TokenStore.IssuedToken issued = tokens.createToken("etl", "P30D");

    assertThat(issued.token()).matches("se_[0-9a-f]{16}_[A-Za-z0-9_-]{43}").startsWith("se_" + issued.id() + "_");
    assertThat(issued.principal()).isEqualTo("etl");
    assertThat(issued.expiresAt()).isEqualTo(Instant.parse("2026-12-31T10:00:00Z"));
    assertThat(issued.toString()).doesNotContain(issued.token());
    assertThat(tokens.authenticate("Bearer " + issued.token())).isEqualTo(new Principal("etl", Set.of(), false));
    assertThat(tokens.createToken("etl", Duration.ofHours(1)).token()).isNotEqualTo(issued.token());
  }

  @Test
  void storesOnlySaltedHashes() {
    tokens.createPrincipal("etl");
    TokenStore.IssuedToken first = tokens.createToken("etl", "P1D");
    TokenStore.IssuedToken second = tokens.createToken("etl", "P1D");

    String raw = secrets.everythingWritten();
    for (TokenStore.IssuedToken issued : new TokenStore.IssuedToken[] {first, second}) {
      // The secret is base64url and may itself hold '_': cut at the fixed-length prefix, not the last '_'.
      String secretPart = issued.token().substring(("se_" + issued.id() + "_").length());
      assertThat(secretPart).hasSize(43);
      assertThat(raw).contains(issued.id()).doesNotContain(issued.token()).doesNotContain(secretPart)
          .doesNotContain(Base64.getEncoder().encodeToString(issued.token().getBytes()));
    }
    assertThat(raw).doesNotContain(BOOTSTRAP);
    assertThat(raw).contains("\"salt\"").contains("\"hash\"");
  }

  @Test
  void refusesUnknownForgedAndMalformedTokens() {
    tokens.createPrincipal("etl");
    TokenStore.IssuedToken issued = tokens.createToken("etl", "PT1H");
    String forged = issued.token().substring(0, issued.token().length() - 4) + "AAAA";
    if (forged.equals(issued.token())) {
      forged = issued.token().substring(0, issued.token().length() - 4) + "BBBB";
    }
    assertUnauthenticated("Bearer " + forged, "unknown or revoked token " + issued.id());
    assertUnauthenticated("Bearer se_00000000000000aa_" + "A".repeat(43), "unknown or revoked token 00000000000000aa");
    assertUnauthenticated("Bearer not-a-token", "malformed token: expected an API token (se_...)");
    assertUnauthenticated(null, "no credentials: send Authorization: Bearer <token>");
  }

  @Test
  void expiresTokens() {
    tokens.createPrincipal("etl");
    TokenStore.IssuedToken issued = tokens.createToken("etl", "PT1H");
    clock.advance(Duration.ofMinutes(59));
    assertThat(tokens.authenticate("Bearer " + issued.token()).name()).isEqualTo("etl");
    clock.advance(Duration.ofMinutes(1));
    assertUnauthenticated("Bearer " + issued.token(), "token " + issued.id() + " expired at 2026-12-01T11:00:00Z");
  }

  @Test
  void revokesByIdAtOnceHereAndWithinTheCacheTtlElsewhere() {
    TokenStore otherProcess = new TokenStore(secrets, Optional.empty(), clock, CACHE_TTL);
    tokens.createPrincipal("etl");
    TokenStore.IssuedToken issued = tokens.createToken("etl", "P1D");
    TokenStore.IssuedToken kept = tokens.createToken("etl", "P1D");
    assertThat(otherProcess.authenticate("Bearer " + issued.token()).name()).isEqualTo("etl");

    tokens.revokeToken("etl", issued.id());
    assertUnauthenticated("Bearer " + issued.token(), "unknown or revoked token " + issued.id());
    assertThat(tokens.authenticate("Bearer " + kept.token()).name()).isEqualTo("etl");
    // The other process answers from its cache until the bound passes, then sees the revocation.
    clock.advance(CACHE_TTL.minusSeconds(1));
    assertThat(otherProcess.authenticate("Bearer " + issued.token()).name()).isEqualTo("etl");
    clock.advance(Duration.ofSeconds(1));
    assertThatThrownBy(() -> otherProcess.authenticate("Bearer " + issued.token()))
        .hasMessage("unknown or revoked token " + issued.id());

    assertThatThrownBy(() -> tokens.revokeToken("etl", issued.id()))
        .hasMessage("principal `etl` has no token `" + issued.id() + "`");
    tokens.createPrincipal("other");
    assertThatThrownBy(() -> tokens.revokeToken("other", kept.id()))
        .hasMessage("principal `other` has no token `" + kept.id() + "`");
  }

  @Test
  void cachesLookupsForTheTtl() {
    tokens.createPrincipal("etl");
    TokenStore.IssuedToken issued = tokens.createToken("etl", "P1D");
    for (int i = 0; i < 5; i++) {
      tokens.authenticate("Bearer " + issued.token());
    }
    assertThat(secrets.reads("auth/tokens/")).isEqualTo(1);
    clock.advance(CACHE_TTL);
    tokens.authenticate("Bearer " + issued.token());
    assertThat(secrets.reads("auth/tokens/")).isEqualTo(2);
  }

  @Test
  void deletingAPrincipalDisablesItsTokensEvenWhenTheNameIsReused() {
    tokens.createPrincipal("etl");
    TokenStore.IssuedToken issued = tokens.createToken("etl", "P1D");
    tokens.authenticate("Bearer " + issued.token());
    tokens.deletePrincipal("etl");
    assertThat(tokens.principalExists("etl")).isFalse();
    assertUnauthenticated("Bearer " + issued.token(), "token " + issued.id() + ": its principal was deleted");

    tokens.createPrincipal("etl");
    clock.advance(CACHE_TTL);
    assertUnauthenticated("Bearer " + issued.token(), "token " + issued.id() + ": its principal was deleted");
    assertThatThrownBy(() -> tokens.deletePrincipal("nobody")).hasMessage("no principal `nobody`");
  }

  @Test
  void theBootstrapTokenIsAClusterAdminByCredential() {
    assertThat(tokens.authenticate("Bearer " + BOOTSTRAP))
        .isEqualTo(new Principal(TokenStore.BOOTSTRAP_PRINCIPAL, Set.of(), true));
    assertUnauthenticated("Bearer " + BOOTSTRAP + "x", "malformed token: expected an API token (se_...)");
    TokenStore withoutBootstrap = new TokenStore(secrets, Optional.empty(), clock, CACHE_TTL);
    assertThatThrownBy(() -> withoutBootstrap.authenticate("Bearer " + BOOTSTRAP))
        .hasMessage("malformed token: expected an API token (se_...)");
  }

  @Test
  void validatesPrincipalsAndExpiry() {
    tokens.createPrincipal("etl");
    assertThatThrownBy(() -> tokens.createPrincipal("etl"))
        .isInstanceOf(SeException.class).hasMessage("principal `etl` already exists")
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.ALREADY_EXISTS));
    assertThatThrownBy(() -> tokens.createPrincipal("Bad Name")).hasMessage(
        "principal name 'Bad Name': expected 1 to 64 of a-z, 0-9, _, . and -, starting with a letter or digit");
    assertThatThrownBy(() -> tokens.createPrincipal("bootstrap"))
        .hasMessage("principal name 'bootstrap' is reserved for the bootstrap token");
    assertThatThrownBy(() -> tokens.createToken("nobody", "P1D"))
        .isInstanceOf(SeException.class).hasMessage("no principal `nobody`")
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.NOT_FOUND));
    assertThatThrownBy(() -> tokens.createToken("etl", "30 days"))
        .hasMessage("expires_in: expected an ISO-8601 duration such as P30D or PT12H, got '30 days'");
    assertThatThrownBy(() -> tokens.createToken("etl", "-PT1H")).hasMessage("expires_in: must be positive, got PT-1H");
  }

  private void assertUnauthenticated(String header, String message) {
    assertThatThrownBy(() -> tokens.authenticate(header))
        .isInstanceOf(SeException.class)
        .hasMessage(message)
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.UNAUTHENTICATED));
  }
}
