package io.storageengine.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class AuthorizerTest {
  private final GrantStore grants = new GrantStore(new RecordingSecretStore(),
      new TestingClock(Instant.parse("2026-12-01T10:00:00Z")), Duration.ofSeconds(10));
  private final AuditCapture audit = new AuditCapture();
  private final Authorizer authorizer = new Authorizer(grants, new AuditLog());

  @AfterEach
  void closeCapture() {
    audit.close();
  }

  @Test
  void everyRoleAllowsExactlyItsActions() {
    Map<CatalogRole, Set<Action>> expected = Map.of(
        CatalogRole.READER, EnumSet.of(Action.READ),
        CatalogRole.WRITER, EnumSet.of(Action.READ, Action.WRITE),
        CatalogRole.OWNER, EnumSet.of(Action.READ, Action.WRITE, Action.DDL));
    for (CatalogRole role : CatalogRole.values()) {
      Principal principal = new Principal(role.roleName() + "-user", Set.of(), false);
      grants.grant("sales", Grantee.principal(principal.name()), role);
      for (Action action : Action.values()) {
        boolean allowed = expected.get(role).contains(action);
        assertThat(authorizer.allows(principal, "sales", action)).as("%s %s", role, action).isEqualTo(allowed);
        // A role on one catalog allows nothing on another.
        assertThat(authorizer.allows(principal, "hr", action)).as("%s %s on hr", role, action).isFalse();
        if (allowed) {
          authorizer.require(principal, "sales", action);
        } else {
          assertDenied(principal, "sales", action, "permission denied: principal `" + principal.name()
              + "` may not " + action.verb() + " catalog `sales`");
        }
      }
    }
  }

  @Test
  void withoutGrantsNothingIsAllowedAndAdminsMayDoEverything() {
    Principal nobody = new Principal("nobody", Set.of(), false);
    Principal bootstrap = new Principal("bootstrap", Set.of(), true);
    Principal ops = new Principal("ops", Set.of(), false);
    Principal platformMember = new Principal("alice", Set.of("platform"), false);
    grants.grantAdmin(Grantee.principal("ops"));
    grants.grantAdmin(Grantee.group("platform"));
    for (Action action : Action.values()) {
      assertThat(authorizer.allows(nobody, "sales", action)).isFalse();
      for (Principal admin : new Principal[] {bootstrap, ops, platformMember, Principal.anonymous()}) {
        authorizer.require(admin, "sales", action);
      }
    }
    authorizer.require(ops, null, Action.ADMIN);
    assertDenied(nobody, null, Action.ADMIN, "permission denied: principal `nobody` may not admin the cluster");
    assertThatThrownBy(() -> authorizer.require(nobody, null, Action.READ))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("read needs a catalog");
  }

  @Test
  void groupsGrantRolesAndTheHighestRoleCounts() {
    grants.grant("sales", Grantee.group("analysts"), CatalogRole.READER);
    grants.grant("sales", Grantee.group("loaders"), CatalogRole.WRITER);
    Principal analyst = new Principal("bob", Set.of("analysts"), false);
    Principal both = new Principal("carol", Set.of("analysts", "loaders"), false);
    Principal namedLikeTheGroup = new Principal("analysts", Set.of(), false);

    assertThat(authorizer.roleOn(analyst, "sales")).contains(CatalogRole.READER);
    assertThat(authorizer.roleOn(both, "sales")).contains(CatalogRole.WRITER);
    assertThat(authorizer.roleOn(namedLikeTheGroup, "sales")).isEmpty();
    authorizer.require(both, "sales", Action.WRITE);
    assertDenied(analyst, "sales", Action.WRITE, "permission denied: principal `bob` may not write catalog `sales`");
  }

  @Test
  void refusalsReadTheSameWhetherOrNotTheCatalogExists() {
    grants.grant("sales", Grantee.principal("owner"), CatalogRole.OWNER);
    Principal stranger = new Principal("stranger", Set.of(), false);
    String onExisting = messageOf(() -> authorizer.require(stranger, "sales", Action.READ));
    String onMissing = messageOf(() -> authorizer.require(stranger, "no-such-catalog", Action.READ));
    assertThat(onMissing.replace("no-such-catalog", "sales")).isEqualTo(onExisting);
  }

  @Test
  void auditsEveryRefusal() {
    Principal stranger = new Principal("stranger", Set.of(), false);
    assertThatThrownBy(() -> authorizer.require(stranger, "sales", Action.DDL)).isInstanceOf(SeException.class);
    assertThatThrownBy(() -> authorizer.require(stranger, null, Action.ADMIN)).isInstanceOf(SeException.class);
    assertThat(audit.lines()).containsExactly(
        "principal=stranger action=ddl catalog=sales outcome=denied",
        "principal=stranger action=admin catalog=- outcome=denied");
  }

  private void assertDenied(Principal principal, String catalog, Action action, String message) {
    assertThatThrownBy(() -> authorizer.require(principal, catalog, action))
        .isInstanceOf(SeException.class)
        .hasMessage(message)
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.FORBIDDEN));
  }

  private static String messageOf(Runnable call) {
    try {
      call.run();
    } catch (SeException e) {
      return e.getMessage();
    }
    throw new AssertionError("expected a refusal");
  }
}
