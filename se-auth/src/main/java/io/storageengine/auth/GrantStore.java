package io.storageengine.auth;

import io.storageengine.common.LruMap;
import io.storageengine.secretstore.SecretStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Who holds which role: per catalog a {@link CatalogRole} for a {@link Grantee}, and cluster-wide the
 * admins. Kept in the {@link SecretStore} (whose values are encrypted and which only this module's
 * keys reach), so every process of a cluster sees the same grants.
 *
 * <p>Layout: {@code auth/grants/<sha256(catalog)>/<sha256(grantee)>} holds one grant,
 * {@code auth/admins/<sha256(grantee)>} one admin. The secret store cannot list, so each scope also
 * has an append-only index {@code .../index/<n>} naming every grantee ever granted there; slots are
 * claimed with the store's atomic {@code create}, so concurrent granters on any number of processes
 * never overwrite each other's entries. The index entry is written before the grant, so a grant that
 * exists is always listed; entries of revoked grants are skipped when listing.
 *
 * <p>Lookups are cached for {@code cacheTtl} (default {@value #DEFAULT_CACHE_TTL_SECONDS} s). A change
 * made through this instance takes effect here at once; one made by another process takes effect here
 * within {@code cacheTtl}.
 */
public final class GrantStore {
  public static final long DEFAULT_CACHE_TTL_SECONDS = 10;
  private static final String ADMIN_ROLE = "admin";
  private static final String ADMIN_SCOPE = AuthStorage.ROOT + "admins/";
  private static final int CACHE_ENTRIES = 10_000;

  private final SecretStore store;
  private final Clock clock;
  private final Duration cacheTtl;
  private final Map<String, Cached> cache = new LruMap<>(CACHE_ENTRIES);
  private final Map<String, Integer> nextIndexSlot = new ConcurrentHashMap<>();

  /** A grant as listed: {@code catalog} is null for cluster admins. */
  public record Grant(String catalog, Grantee grantee, String role) {}

  /** The stored form of a grant. */
  record GrantDocument(String catalog, String grantee, String role) {}

  /** The stored form of an index slot. */
  record IndexDocument(String grantee) {}

  private record Cached(Optional<GrantDocument> grant, Instant fetchedAt) {}

  public GrantStore(SecretStore store) {
    this(store, Clock.systemUTC(), Duration.ofSeconds(DEFAULT_CACHE_TTL_SECONDS));
  }

  public GrantStore(SecretStore store, Clock clock, Duration cacheTtl) {
    this.store = Objects.requireNonNull(store, "store");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.cacheTtl = Objects.requireNonNull(cacheTtl, "cacheTtl");
  }

  /** Gives {@code grantee} {@code role} on {@code catalog}, replacing the role it held there. */
  public void grant(String catalog, Grantee grantee, CatalogRole role) {
    put(catalogScope(catalog), grantee, new GrantDocument(catalog, grantee.text(), role.roleName()));
  }

  /** The role {@code grantee} holds on {@code catalog} itself (not through groups), if any. */
  public Optional<CatalogRole> role(String catalog, Grantee grantee) {
    return lookup(catalogScope(catalog), grantee).map(g -> CatalogRole.parse(g.role()));
  }

  /** Every grant on {@code catalog}, in the order the grantees were first granted. */
  public List<Grant> list(String catalog) {
    return listScope(catalogScope(catalog));
  }

  /** Removes the grant of {@code grantee} on {@code catalog}; true when there was one. */
  public boolean revoke(String catalog, Grantee grantee) {
    return remove(catalogScope(catalog), grantee);
  }

  /** Removes every grant on {@code catalog} (when the catalog is deleted, so a new one of that name starts bare). */
  public void revokeAll(String catalog) {
    for (Grant grant : list(catalog)) {
      revoke(catalog, grant.grantee());
    }
  }

  /** Makes {@code grantee} a cluster admin. */
  public void grantAdmin(Grantee grantee) {
    put(ADMIN_SCOPE, grantee, new GrantDocument(null, grantee.text(), ADMIN_ROLE));
  }

  /** True when {@code grantee} itself (not through groups) is a cluster admin. */
  public boolean isAdmin(Grantee grantee) {
    return lookup(ADMIN_SCOPE, grantee).isPresent();
  }

  /** Every cluster admin granted here (the bootstrap token's principal is not one: its credential is). */
  public List<Grant> admins() {
    return listScope(ADMIN_SCOPE);
  }

  /** Removes {@code grantee} from the cluster admins; true when it was one. */
  public boolean revokeAdmin(Grantee grantee) {
    return remove(ADMIN_SCOPE, grantee);
  }

  private static String catalogScope(String catalog) {
    Objects.requireNonNull(catalog, "catalog");
    return AuthStorage.ROOT + "grants/" + AuthStorage.segment(catalog) + "/";
  }

  private static String entryKey(String scope, Grantee grantee) {
    return scope + AuthStorage.segment(grantee.text());
  }

  private void put(String scope, Grantee grantee, GrantDocument document) {
    String key = entryKey(scope, grantee);
    if (store.get(key).isEmpty()) {
      appendToIndex(scope, grantee);
    }
    store.put(key, AuthStorage.write(document));
    forget(key);
  }

  private boolean remove(String scope, Grantee grantee) {
    String key = entryKey(scope, grantee);
    boolean existed = store.get(key).isPresent();
    store.delete(key);
    forget(key);
    return existed;
  }

  private Optional<GrantDocument> lookup(String scope, Grantee grantee) {
    String key = entryKey(scope, grantee);
    Instant now = clock.instant();
    synchronized (cache) {
      Cached cached = cache.get(key);
      if (cached != null && now.isBefore(cached.fetchedAt().plus(cacheTtl))) {
        return cached.grant();
      }
    }
    Optional<GrantDocument> grant = AuthStorage.read(store, key, GrantDocument.class);
    synchronized (cache) {
      cache.put(key, new Cached(grant, now));
    }
    return grant;
  }

  private void forget(String key) {
    synchronized (cache) {
      cache.remove(key);
    }
  }

  private List<Grant> listScope(String scope) {
    Set<String> grantees = new LinkedHashSet<>();
    for (int slot = 0; ; slot++) {
      Optional<IndexDocument> entry = AuthStorage.read(store, indexKey(scope, slot), IndexDocument.class);
      if (entry.isEmpty()) {
        break;
      }
      grantees.add(entry.get().grantee());
    }
    List<Grant> grants = new ArrayList<>();
    for (String text : grantees) {
      Grantee grantee = Grantee.parse(text);
      AuthStorage.read(store, entryKey(scope, grantee), GrantDocument.class)
          .ifPresent(g -> grants.add(new Grant(g.catalog(), grantee, g.role())));
    }
    return grants;
  }

  private void appendToIndex(String scope, Grantee grantee) {
    byte[] entry = AuthStorage.write(new IndexDocument(grantee.text()));
    // The hint only saves probes; create() decides who owns a slot.
    int slot = nextIndexSlot.getOrDefault(scope, 0);
    while (!store.create(indexKey(scope, slot), entry)) {
      slot++;
    }
    nextIndexSlot.put(scope, slot + 1);
  }

  private static String indexKey(String scope, int slot) {
    return scope + "index/" + slot;
  }
}
