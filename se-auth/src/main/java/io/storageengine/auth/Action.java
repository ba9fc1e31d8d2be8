package io.storageengine.auth;

import java.util.Locale;

/** What a request does to a catalog, as {@link Authorizer#require} checks it. */
public enum Action {
  /** Flight SQL queries, REST facade reads: needs {@link CatalogRole#READER}. */
  READ,
  /** Ingestion: needs {@link CatalogRole#WRITER}. */
  WRITE,
  /** Table DDL and REST facade writes: needs {@link CatalogRole#OWNER}. */
  DDL,
  /** Creating and deleting catalogs, managing principals, tokens and grants: cluster admins only. */
  ADMIN;

  /** The lower-case name used in messages and audit lines. */
  public String verb() {
    return name().toLowerCase(Locale.ROOT);
  }
}
