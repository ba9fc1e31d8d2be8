package io.storageengine.catalog.rest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.exceptions.BadRequestException;

/**
 * One page of a listing, by the REST spec's {@code pageToken} / {@code pageSize} query
 * parameters. A token is the position of the page's first item in the catalog's (stable) order;
 * the empty token is the first page. Without {@code pageSize} the listing is answered whole from
 * the token on, with no next token. {@code next} is null on the last page. {@code items} is a
 * mutable copy (Iceberg's response builders probe it for nulls, which immutable lists refuse).
 */
record RestPages<T>(List<T> items, String next) {
  static final int MAX_PAGE_SIZE = 10_000;

  /** The page of {@code all} the query asks for; a bad token or size is a 400 naming it. */
  static <T> RestPages<T> of(List<T> all, Map<String, String> query) {
    String token = query.get("pageToken");
    String size = query.get("pageSize");
    int start = 0;
    if (token != null && !token.isEmpty()) {
      try {
        start = Integer.parseInt(token);
      } catch (NumberFormatException e) {
        start = -1;
      }
      if (start < 0) {
        throw new BadRequestException("invalid pageToken '%s': pass the next-page-token of the previous page", token);
      }
    }
    int pageSize = Integer.MAX_VALUE;
    if (size != null) {
      try {
        pageSize = Integer.parseInt(size);
      } catch (NumberFormatException e) {
        pageSize = 0;
      }
      if (pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
        throw new BadRequestException("invalid pageSize '%s': must be an integer from 1 to %d", size, MAX_PAGE_SIZE);
      }
    }
    if (start >= all.size()) {
      return new RestPages<>(new ArrayList<>(), null);
    }
    int end = (int) Math.min((long) start + pageSize, all.size());
    return new RestPages<>(new ArrayList<>(all.subList(start, end)), end < all.size() ? String.valueOf(end) : null);
  }
}
