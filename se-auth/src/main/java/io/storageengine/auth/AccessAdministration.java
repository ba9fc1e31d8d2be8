package io.storageengine.auth;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The admin operations of the security API ({@code POST /principals}, tokens, grants), each checked
 * with {@link Authorizer#require} for {@link Action#ADMIN} and written to the {@link AuditLog} with its
 * outcome: the one place a protocol layer calls, so no route can forget the check or the audit line.
 * In {@code oidc} mode there is no {@link TokenStore}: principals belong to the issuer, and the
 * principal and token operations are UNSUPPORTED.
 */
public final class AccessAdministration {
  private final Optional<TokenStore> tokens;
  private final GrantStore grants;
  private final Authorizer authorizer;
  private final AuditLog audit;

  public AccessAdministration(Optional<TokenStore> tokens, GrantStore grants, Authorizer authorizer, AuditLog audit) {
    this.tokens = Objects.requireNonNull(tokens, "tokens");
    this.grants = Objects.requireNonNull(grants, "grants");
    this.authorizer = Objects.requireNonNull(authorizer, "authorizer");
    this.audit = Objects.requireNonNull(audit, "audit");
  }

  /** Creates principal {@code name}. */
  public void createPrincipal(Principal caller, String name) {
    run(caller, "create-principal", name, null, () -> {
      tokenStore().createPrincipal(name);
      return null;
    });
  }

  /** Deletes principal {@code name}; its tokens stop working. */
  public void deletePrincipal(Principal caller, String name) {
    run(caller, "delete-principal", name, null, () -> {
      tokenStore().deletePrincipal(name);
      return null;
    });
  }

  /** Issues a token for {@code principal} valid for {@code expiresIn} (ISO-8601); the audit line names its id only. */
  public TokenStore.IssuedToken createToken(Principal caller, String principal, String expiresIn) {
    authorizer.require(caller, null, Action.ADMIN);
    TokenStore.IssuedToken issued;
    try {
      issued = tokenStore().createToken(principal, expiresIn);
    } catch (SeException e) {
      audit.adminAction(caller, "create-token", principal, null, e.code().name());
      throw e;
    }
    audit.adminAction(caller, "create-token", principal + "/" + issued.id(), null, "ok");
    return issued;
  }

  /** Revokes token {@code id} of {@code principal}. */
  public void revokeToken(Principal caller, String principal, String id) {
    run(caller, "revoke-token", principal + "/" + id, null, () -> {
      tokenStore().revokeToken(principal, id);
      return null;
    });
  }

  /** Gives {@code grantee} {@code role} on {@code catalog}. */
  public void grant(Principal caller, String catalog, Grantee grantee, CatalogRole role) {
    run(caller, "grant-" + role.roleName(), grantee.text(), catalog, () -> {
      grants.grant(catalog, grantee, role);
      return null;
    });
  }

  /** The grants on {@code catalog}. */
  public List<GrantStore.Grant> listGrants(Principal caller, String catalog) {
    return run(caller, "list-grants", null, catalog, () -> grants.list(catalog));
  }

  /** Removes the grant of {@code grantee} on {@code catalog}; NOT_FOUND when there is none. */
  public void revokeGrant(Principal caller, String catalog, Grantee grantee) {
    run(caller, "revoke-grant", grantee.text(), catalog, () -> {
      if (!grants.revoke(catalog, grantee)) {
        throw SeException.notFound("`%s` holds no grant on catalog `%s`", grantee.text(), catalog);
      }
      return null;
    });
  }

  /** Makes {@code grantee} a cluster admin. */
  public void grantAdmin(Principal caller, Grantee grantee) {
    run(caller, "grant-admin", grantee.text(), null, () -> {
      grants.grantAdmin(grantee);
      return null;
    });
  }

  /** Removes {@code grantee} from the cluster admins; NOT_FOUND when it is not one. */
  public void revokeAdmin(Principal caller, Grantee grantee) {
    run(caller, "revoke-admin", grantee.text(), null, () -> {
      if (!grants.revokeAdmin(grantee)) {
        throw SeException.notFound("`%s` is not a cluster admin", grantee.text());
      }
      return null;
    });
  }

  private <T> T run(Principal caller, String action, String target, String catalog, Supplier<T> operation) {
    // Only cluster admins pass, also for operations on one catalog (no catalog role allows ADMIN).
    authorizer.require(caller, catalog, Action.ADMIN);
    T result;
    try {
      result = operation.get();
    } catch (SeException e) {
      audit.adminAction(caller, action, target, catalog, e.code().name());
      throw e;
    }
    audit.adminAction(caller, action, target, catalog, "ok");
    return result;
  }

  private TokenStore tokenStore() {
    return tokens.orElseThrow(() -> new SeException(ErrorCode.UNSUPPORTED,
        "principals and tokens belong to the OIDC issuer in --auth.mode oidc; grant roles to its subjects and groups"));
  }
}
