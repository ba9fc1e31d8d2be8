package io.storageengine.auth;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Decides whether a {@link Principal} may perform an {@link Action}. A cluster admin (by credential,
 * {@link Principal#admin()}, or by a grant to the principal or one of its groups) may do everything;
 * anyone else needs a {@link CatalogRole} on the catalog that {@link CatalogRole#allows} the action,
 * held directly or through a group (the highest counts). Every refusal is written to the
 * {@link AuditLog}.
 *
 * <p>The decision reads grants only, never the catalog registry, and a refusal is worded the same
 * whether or not the catalog exists, so callers cannot probe for other tenants' catalog names.
 */
public final class Authorizer {
  private final GrantStore grants;
  private final AuditLog audit;

  public Authorizer(GrantStore grants, AuditLog audit) {
    this.grants = Objects.requireNonNull(grants, "grants");
    this.audit = Objects.requireNonNull(audit, "audit");
  }

  /**
   * Returns when {@code principal} may perform {@code action} on {@code catalog}; {@code catalog} is
   * null only for cluster-wide {@link Action#ADMIN} actions (creating catalogs, managing principals).
   *
   * @throws SeException FORBIDDEN (HTTP 403, Flight UNAUTHORIZED, gRPC PERMISSION_DENIED) otherwise
   */
  public void require(Principal principal, String catalog, Action action) {
    Objects.requireNonNull(principal, "principal");
    Objects.requireNonNull(action, "action");
    if (catalog == null && action != Action.ADMIN) {
      throw new IllegalArgumentException(action.verb() + " needs a catalog");
    }
    if (allows(principal, catalog, action)) {
      return;
    }
    audit.denied(principal, action, catalog);
    throw new SeException(ErrorCode.FORBIDDEN, catalog == null
        ? String.format("permission denied: principal `%s` may not %s the cluster", principal.name(), action.verb())
        : String.format("permission denied: principal `%s` may not %s catalog `%s`", principal.name(),
            action.verb(), catalog));
  }

  /** True when {@link #require} would return. */
  public boolean allows(Principal principal, String catalog, Action action) {
    if (isAdmin(principal)) {
      return true;
    }
    return catalog != null && roleOn(principal, catalog).map(role -> role.allows(action)).orElse(false);
  }

  /** True when {@code principal} is a cluster admin by its credential or by a grant. */
  public boolean isAdmin(Principal principal) {
    if (principal.admin()) {
      return true;
    }
    for (Grantee grantee : granteesOf(principal)) {
      if (grants.isAdmin(grantee)) {
        return true;
      }
    }
    return false;
  }

  /** The highest role {@code principal} holds on {@code catalog}, directly or through a group. */
  public Optional<CatalogRole> roleOn(Principal principal, String catalog) {
    CatalogRole best = null;
    for (Grantee grantee : granteesOf(principal)) {
      Optional<CatalogRole> role = grants.role(catalog, grantee);
      if (role.isPresent() && (best == null || role.get().compareTo(best) > 0)) {
        best = role.get();
      }
    }
    return Optional.ofNullable(best);
  }

  private static List<Grantee> granteesOf(Principal principal) {
    List<Grantee> grantees = new ArrayList<>(1 + principal.groups().size());
    grantees.add(Grantee.principal(principal.name()));
    for (String group : principal.groups()) {
      grantees.add(Grantee.group(group));
    }
    return grantees;
  }
}
