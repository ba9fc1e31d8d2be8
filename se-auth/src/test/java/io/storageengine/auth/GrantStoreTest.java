package io.storageengine.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class GrantStoreTest {
  private static final Duration CACHE_TTL = Duration.ofSeconds(10);
  private final TestingClock clock = new TestingClock(Instant.parse("2026-12-01T10:00:00Z"));
  private final RecordingSecretStore secrets = new RecordingSecretStore();
  private final GrantStore grants = new GrantStore(secrets, clock, CACHE_TTL);

  @Test
  void grantsListsAndRevokes() {
    grants.grant("sales", Grantee.principal("etl"), CatalogRole.WRITER);
    grants.grant("sales", Grantee.group("analysts"), CatalogRole.READER);
    grants.grant("hr", Grantee.principal("etl"), CatalogRole.OWNER);

    assertThat(grants.role("sales", Grantee.principal("etl"))).contains(CatalogRole.WRITER);
    assertThat(grants.role("sales", Grantee.principal("analysts"))).isEmpty();
    assertThat(grants.list("sales")).containsExactly(
        new GrantStore.Grant("sales", Grantee.principal("etl"), "writer"),
        new GrantStore.Grant("sales", Grantee.group("analysts"), "reader"));

    grants.grant("sales", Grantee.principal("etl"), CatalogRole.READER);
    assertThat(grants.role("sales", Grantee.principal("etl"))).contains(CatalogRole.READER);
    assertThat(grants.revoke("sales", Grantee.principal("etl"))).isTrue();
    assertThat(grants.revoke("sales", Grantee.principal("etl"))).isFalse();
    assertThat(grants.role("sales", Grantee.principal("etl"))).isEmpty();
    assertThat(grants.list("sales")).containsExactly(
        new GrantStore.Grant("sales", Grantee.group("analysts"), "reader"));

    grants.grant("sales", Grantee.principal("etl"), CatalogRole.OWNER);
    assertThat(grants.list("sales")).containsExactly(
        new GrantStore.Grant("sales", Grantee.principal("etl"), "owner"),
        new GrantStore.Grant("sales", Grantee.group("analysts"), "reader"));
    assertThat(grants.list("hr")).containsExactly(new GrantStore.Grant("hr", Grantee.principal("etl"), "owner"));
    assertThat(grants.list("unknown")).isEmpty();
  }

  @Test
  void revokeAllLeavesACatalogOfTheSameNameBare() {
    grants.grant("sales", Grantee.principal("etl"), CatalogRole.WRITER);
    grants.grant("sales", Grantee.group("analysts"), CatalogRole.READER);
    grants.revokeAll("sales");
    assertThat(grants.list("sales")).isEmpty();
    assertThat(grants.role("sales", Grantee.principal("etl"))).isEmpty();
  }

  @Test
  void keepsAdminsApartFromCatalogGrants() {
    grants.grantAdmin(Grantee.group("platform"));
    grants.grantAdmin(Grantee.principal("ops"));
    assertThat(grants.isAdmin(Grantee.group("platform"))).isTrue();
    assertThat(grants.isAdmin(Grantee.principal("platform"))).isFalse();
    assertThat(grants.admins()).extracting(GrantStore.Grant::grantee)
        .containsExactly(Grantee.group("platform"), Grantee.principal("ops"));
    assertThat(grants.revokeAdmin(Grantee.principal("ops"))).isTrue();
    assertThat(grants.isAdmin(Grantee.principal("ops"))).isFalse();
    assertThat(grants.list("platform")).isEmpty();
  }

  @Test
  void anyTextIsAGranteeOrCatalogAndTheGrantsOfEveryProcessAreListed() throws Exception {
    GrantStore otherProcess = new GrantStore(secrets, clock, CACHE_TTL);
    List<CompletableFuture<Void>> writers = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      GrantStore store = i % 2 == 0 ? grants : otherProcess;
      String name = "User " + i + "@Example.COM";
      writers.add(CompletableFuture.runAsync(() -> store.grant("Sales Ünïcode/2026", Grantee.principal(name),
          CatalogRole.READER)));
    }
    CompletableFuture.allOf(writers.toArray(CompletableFuture[]::new)).get();
    assertThat(grants.list("Sales Ünïcode/2026")).hasSize(8);
    assertThat(otherProcess.list("Sales Ünïcode/2026")).hasSize(8);
  }

  @Test
  void aChangeByAnotherProcessIsSeenWithinTheCacheTtl() {
    GrantStore otherProcess = new GrantStore(secrets, clock, CACHE_TTL);
    grants.grant("sales", Grantee.principal("etl"), CatalogRole.WRITER);
    assertThat(otherProcess.role("sales", Grantee.principal("etl"))).contains(CatalogRole.WRITER);
    grants.revoke("sales", Grantee.principal("etl"));
    assertThat(grants.role("sales", Grantee.principal("etl"))).isEmpty();
    clock.advance(CACHE_TTL.minusSeconds(1));
    assertThat(otherProcess.role("sales", Grantee.principal("etl"))).contains(CatalogRole.WRITER);
    clock.advance(Duration.ofSeconds(1));
    assertThat(otherProcess.role("sales", Grantee.principal("etl"))).isEmpty();
  }

  @Test
  void granteesReadBackFromTheirText() {
    assertThat(Grantee.parse("group:analysts")).isEqualTo(Grantee.group("analysts"));
    assertThat(Grantee.parse("etl")).isEqualTo(Grantee.principal("etl"));
    assertThat(Grantee.parse("principal:group:odd")).isEqualTo(Grantee.principal("group:odd"));
    assertThat(Grantee.principal("group:odd").text()).isEqualTo("principal:group:odd");
    assertThat(Grantee.parse(Grantee.principal("group:odd").text())).isEqualTo(Grantee.principal("group:odd"));
    assertThatThrownBy(() -> Grantee.parse("group:"))
        .hasMessage("grantee: expected a principal name or group:<name> of 1 to 256 characters");
    assertThatThrownBy(() -> CatalogRole.parse("admin")).hasMessage("role: expected reader, writer or owner, got 'admin'");
  }
}
