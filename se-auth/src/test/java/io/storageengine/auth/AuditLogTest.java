package io.storageengine.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The audit trail of a whole session of admin work and refused requests, scanned for tokens. */
class AuditLogTest {
  private static final String BOOTSTRAP = "bootstrap-0123456789abcdef0123456789";

  private final AuditCapture capture = new AuditCapture();
  private final TestingClock clock = new TestingClock(Instant.parse("2026-12-01T10:00:00Z"));
  private final RecordingSecretStore secrets = new RecordingSecretStore();
  private final AuditLog audit = new AuditLog();
  private final TokenStore tokens = new TokenStore(secrets, Optional.of(BOOTSTRAP), clock, Duration.ofSeconds(10));
  private final GrantStore grants = new GrantStore(secrets, clock, Duration.ofSeconds(10));
  private final Authorizer authorizer = new Authorizer(grants, audit);
  private final AccessAdministration admin = new AccessAdministration(Optional.of(tokens), grants, authorizer, audit);
  private final Authenticator authenticator = Authenticator.audited(tokens, audit);

  @AfterEach
  void closeCapture() {
    capture.close();
  }

  @Test
  void recordsAdminActionsAndRefusalsWithoutEverATokenText() {
    Principal root = authenticator.authenticate("Bearer " + BOOTSTRAP);
    admin.createPrincipal(root, "etl");
    TokenStore.IssuedToken issued = admin.createToken(root, "etl", "P30D");
    admin.grant(root, "sales", Grantee.principal("etl"), CatalogRole.WRITER);
    admin.grant(root, "sales", Grantee.group("analysts"), CatalogRole.READER);
    assertThat(admin.listGrants(root, "sales")).hasSize(2);

    Principal etl = authenticator.authenticate("Bearer " + issued.token());
    authorizer.require(etl, "sales", Action.WRITE);
    assertThatThrownBy(() -> authorizer.require(etl, "sales", Action.DDL)).isInstanceOf(SeException.class);
    assertThatThrownBy(() -> admin.createToken(etl, "etl", "P1D")).isInstanceOf(SeException.class);
    assertThatThrownBy(() -> admin.grant(etl, "sales", Grantee.principal("etl"), CatalogRole.OWNER))
        .hasMessage("permission denied: principal `etl` may not admin catalog `sales`");
    assertThatThrownBy(() -> admin.revokeGrant(root, "sales", Grantee.principal("nobody")))
        .hasMessage("`nobody` holds no grant on catalog `sales`");

    String forged = issued.token().substring(0, issued.token().length() - 1)
        + (issued.token().endsWith("A") ? "B" : "A");
    assertThatThrownBy(() -> authenticator.authenticate("Bearer " + forged)).isInstanceOf(SeException.class);
    assertThatThrownBy(() -> authenticator.authenticate("Bearer " + BOOTSTRAP + "-typo"))
        .isInstanceOf(SeException.class);
    admin.revokeToken(root, "etl", issued.id());
    assertThatThrownBy(() -> authenticator.authenticate("Bearer " + issued.token())).isInstanceOf(SeException.class);

    List<String> lines = capture.lines();
    assertThat(lines).containsExactly(
        "principal=bootstrap action=create-principal target=etl catalog=- outcome=ok",
        "principal=bootstrap action=create-token target=etl/" + issued.id() + " catalog=- outcome=ok",
        "principal=bootstrap action=grant-writer target=etl catalog=sales outcome=ok",
        "principal=bootstrap action=grant-reader target=group:analysts catalog=sales outcome=ok",
        "principal=bootstrap action=list-grants target=- catalog=sales outcome=ok",
        "principal=etl action=ddl catalog=sales outcome=denied",
        "principal=etl action=admin catalog=- outcome=denied",
        "principal=etl action=admin catalog=sales outcome=denied",
        "principal=bootstrap action=revoke-grant target=nobody catalog=sales outcome=NOT_FOUND",
        "principal=- action=authenticate catalog=- outcome=unauthenticated reason=\"unknown or revoked token "
            + issued.id() + "\"",
        "principal=- action=authenticate catalog=- outcome=unauthenticated reason=\"malformed token: expected an "
            + "API token (se_...)\"",
        "principal=bootstrap action=revoke-token target=etl/" + issued.id() + " catalog=- outcome=ok",
        "principal=- action=authenticate catalog=- outcome=unauthenticated reason=\"unknown or revoked token "
            + issued.id() + "\"");
    String secretPart = issued.token().substring(("se_" + issued.id() + "_").length());
    for (String line : lines) {
      assertThat(line).doesNotContain(issued.token()).doesNotContain(secretPart).doesNotContain(forged)
          .doesNotContain(BOOTSTRAP);
    }
  }

  @Test
  void craftedNamesCannotForgeLines() {
    audit.adminAction(new Principal("eve\nprincipal=root", Set.of(), false), "create-principal", "a b=c", null, "ok");
    assertThat(capture.lines()).containsExactly(
        "principal=\"eve?principal=root\" action=create-principal target=\"a b=c\" catalog=- outcome=ok");
  }

  @Test
  void oidcModeHasNoPrincipalsToManage() {
    AccessAdministration oidc = new AccessAdministration(Optional.empty(), grants, authorizer, audit);
    Principal root = new Principal("root", Set.of(), true);
    assertThatThrownBy(() -> oidc.createPrincipal(root, "etl"))
        .isInstanceOf(SeException.class)
        .hasMessage("principals and tokens belong to the OIDC issuer in --auth.mode oidc; grant roles to its "
            + "subjects and groups")
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.UNSUPPORTED));
    oidc.grant(root, "sales", Grantee.group("analysts"), CatalogRole.READER);
    assertThat(capture.lines()).containsExactly(
        "principal=root action=create-principal target=etl catalog=- outcome=UNSUPPORTED",
        "principal=root action=grant-reader target=group:analysts catalog=sales outcome=ok");
  }

  @Test
  void noneModeLetsEveryoneInAsTheAnonymousAdmin() {
    Principal anyone = Authenticator.none().authenticate(null);
    assertThat(anyone).isEqualTo(Principal.anonymous());
    assertThat(Authenticator.none().authenticate("Bearer " + Base64.getEncoder().encodeToString(new byte[8])))
        .isEqualTo(anyone);
    authorizer.require(anyone, "sales", Action.DDL);
    authorizer.require(anyone, null, Action.ADMIN);
    assertThat(capture.lines()).isEmpty();
  }
}
