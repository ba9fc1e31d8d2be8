package io.storageengine.auth;

import io.storageengine.common.SeException;
import java.util.Locale;

/** A role on one catalog; each includes the ones before it: reader &lt; writer &lt; owner. */
public enum CatalogRole {
  READER,
  WRITER,
  OWNER;

  /** True when holding this role permits {@code action}; {@link Action#ADMIN} is never permitted by a catalog role. */
  public boolean allows(Action action) {
    return switch (action) {
      case READ -> true;
      case WRITE -> this != READER;
      case DDL -> this == OWNER;
      case ADMIN -> false;
    };
  }

  /** {@code reader}, {@code writer} or {@code owner}. */
  public String roleName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The role {@code text} names ({@code reader}, {@code writer}, {@code owner}). */
  public static CatalogRole parse(String text) {
    for (CatalogRole role : values()) {
      if (role.roleName().equals(text)) {
        return role;
      }
    }
    throw SeException.invalid("role: expected reader, writer or owner, got '%s'", text);
  }
}
