package io.storageengine.auth;

import java.util.Objects;
import java.util.Set;

/**
 * Who a request is from, as an {@link Authenticator} established it.
 *
 * @param name the principal's name: a token principal's name, or the OIDC principal claim
 * @param groups the OIDC groups the token listed (empty for API tokens)
 * @param admin true when the credential itself makes the caller a cluster admin (the bootstrap token,
 *     or mode {@code none}); other principals are admins through a grant ({@link GrantStore#grantAdmin})
 */
public record Principal(String name, Set<String> groups, boolean admin) {
  private static final Principal ANONYMOUS = new Principal("anonymous", Set.of(), true);

  public Principal {
    Objects.requireNonNull(name, "name");
    groups = Set.copyOf(groups);
  }

  /** The caller in mode {@code none}: allowed everything. */
  public static Principal anonymous() {
    return ANONYMOUS;
  }
}
