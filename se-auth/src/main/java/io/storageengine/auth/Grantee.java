package io.storageengine.auth;

import io.storageengine.common.SeException;
import java.util.Objects;

/**
 * Who a grant is for: a principal ({@code etl}) or a group of the OIDC issuer ({@code group:analysts}).
 * Written as text, a name starting with {@code group:} is a group; {@code principal:} may prefix a
 * principal whose name itself starts with {@code group:}.
 */
public record Grantee(Kind kind, String name) {
  private static final String GROUP = "group:";
  private static final String PRINCIPAL = "principal:";
  private static final int MAX_NAME_LENGTH = 256;

  public enum Kind { PRINCIPAL, GROUP }

  public Grantee {
    Objects.requireNonNull(kind, "kind");
    if (name == null || name.isBlank() || name.length() > MAX_NAME_LENGTH
        || name.chars().anyMatch(Character::isISOControl)) {
      throw SeException.invalid("grantee: expected a principal name or group:<name> of 1 to %d characters",
          MAX_NAME_LENGTH);
    }
  }

  public static Grantee principal(String name) {
    return new Grantee(Kind.PRINCIPAL, name);
  }

  public static Grantee group(String name) {
    return new Grantee(Kind.GROUP, name);
  }

  /** {@code group:<name>} is a group, {@code principal:<name>} or a bare name a principal. */
  public static Grantee parse(String text) {
    if (text != null && text.startsWith(GROUP)) {
      return group(text.substring(GROUP.length()));
    }
    if (text != null && text.startsWith(PRINCIPAL)) {
      return principal(text.substring(PRINCIPAL.length()));
    }
    return principal(text);
  }

  /** The text {@link #parse} reads back into this grantee. */
  public String text() {
    if (kind == Kind.GROUP) {
      return GROUP + name;
    }
    return name.startsWith(GROUP) || name.startsWith(PRINCIPAL) ? PRINCIPAL + name : name;
  }

  @Override
  public String toString() {
    return text();
  }
}
