package io.storageengine.catalog;

import org.apache.iceberg.catalog.Catalog;

/** Turns a tenant (catalog) id into its live Iceberg catalog. */
public interface TenantCatalogs {
  /**
   * The live catalog of {@code catalogId}; the same instance until its config changes.
   * Throws {@code SeException(NOT_FOUND)} when no such catalog is configured, and
   * {@code SeException(INVALID_ARGUMENT)} for an invalid id.
   */
  Catalog catalog(String catalogId);
}
