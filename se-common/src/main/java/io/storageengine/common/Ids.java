package io.storageengine.common;

import java.util.regex.Pattern;

/** Validation of the identifiers that appear in paths and keys. */
public final class Ids {
  private static final Pattern CATALOG_ID = Pattern.compile("^[a-z][a-z0-9_-]{0,62}$");

  private Ids() {}

  public static boolean isValidCatalogId(String id) {
    return id != null && CATALOG_ID.matcher(id).matches();
  }

  /** Throws INVALID_ARGUMENT naming the id when it does not match {@code ^[a-z][a-z0-9_-]{0,62}$}. */
  public static String requireCatalogId(String id) {
    if (!isValidCatalogId(id)) {
      throw SeException.invalid(
          "invalid catalog id '%s': must match ^[a-z][a-z0-9_-]{0,62}$", id == null ? "" : id);
    }
    return id;
  }
}
