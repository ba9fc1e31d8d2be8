package io.storageengine.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.ErrorCode;
import io.storageengine.common.SeException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocationConfinementTest {
  @TempDir Path dir;

  @Test
  void locationsUnderTheRootInEverySpellingAreAccepted() throws Exception {
    Path root = Files.createDirectories(dir.resolve("wh"));
    LocationConfinement c = LocationConfinement.under(root.toUri().toString());
    assertThat(c.contains(root.toString())).isTrue();
    assertThat(c.contains(root + "/ns/t")).isTrue();
    assertThat(c.contains("file:" + root + "/ns/t/data/x.parquet")).isTrue();
    assertThat(c.contains("file://" + root + "//ns//t")).isTrue();
    assertThat(c.contains("file://localhost" + root + "/ns/t")).isTrue();
    assertThat(c.contains(root + "/s=a%C3%A9/f.parquet")).isTrue();
  }

  @Test
  void escapesAreRefusedNamingTheProblem() throws Exception {
    Path root = Files.createDirectories(dir.resolve("wh"));
    Files.createDirectories(dir.resolve("wh2"));
    LocationConfinement c = LocationConfinement.under(root.toString());
    assertRefused(c, dir.resolve("wh2").toString(), "outside the catalog's storage root");
    assertRefused(c, root + "2/t", "outside the catalog's storage root"); // a sibling sharing the prefix
    assertRefused(c, root + "/../wh2", "'.' and '..' segments");
    assertRefused(c, root + "/%2E%2E/wh2", "'.' and '..' segments");
    assertRefused(c, root + "/./t", "'.' and '..' segments");
    assertRefused(c, root + "/a%2Fb", "encoded slashes");
    assertRefused(c, root + "\\..\\x", "backslashes");
    assertRefused(c, root + "/t\u0000", "control characters");
    assertRefused(c, "file://evil" + root + "/t", "must not name a host");
    assertRefused(c, "s3://bucket" + root + "/t", "outside the catalog's storage root");
    assertRefused(c, "relative/path", "expected an absolute path");
    assertRefused(c, "", "a location is required");
  }

  @Test
  void symbolicLinksCannotLeadOutOfTheRoot() throws Exception {
    Path root = Files.createDirectories(dir.resolve("wh"));
    Path outside = Files.createDirectories(dir.resolve("outside"));
    Files.createSymbolicLink(root.resolve("link"), outside);
    LocationConfinement c = LocationConfinement.under(root.toString());
    assertRefused(c, root + "/link/t/data/f.parquet", "outside the catalog's storage root");
    assertThat(c.contains(root + "/real/t")).isTrue();
  }

  @Test
  void objectStoreRootsCompareSchemeBucketAndSegments() {
    LocationConfinement c = LocationConfinement.under("s3://lake/tenant-a");
    assertThat(c.contains("s3://lake/tenant-a/ns/t")).isTrue();
    assertThat(c.contains("s3a://lake/tenant-a/ns/t")).isTrue();
    assertRefused(c, "s3://lake/tenant-ab/t", "outside");
    assertRefused(c, "s3://other/tenant-a/t", "outside");
    assertRefused(c, "gs://lake/tenant-a/t", "outside");
    assertRefused(c, "s3:///tenant-a", "expected <scheme>://<bucket>/<path>");
    assertThat(LocationConfinement.overlaps("s3://lake/a", "s3://lake/a/b")).isTrue();
    assertThat(LocationConfinement.overlaps("s3://lake/a/b", "s3://lake/a")).isTrue();
    assertThat(LocationConfinement.overlaps("s3://lake/a", "s3://lake/ab")).isFalse();
  }

  @Test
  void unconfinedStillRefusesMalformedLocations() {
    LocationConfinement c = LocationConfinement.unconfined();
    assertThat(c.contains("s3://anywhere/x")).isTrue();
    assertRefused(c, "s3://anywhere/../x", "'.' and '..' segments");
  }

  @Test
  void identifiersAreNamesNeverPaths() {
    TableLocationPolicy.checkIdentifier(TableIdentifier.of("analytics", "events.v2"));
    for (String bad : new String[] {"a/b", "..", ".", "x\\y", "t\u0001"}) {
      assertThatThrownBy(() -> TableLocationPolicy.checkIdentifier(TableIdentifier.of(Namespace.of("ns"), bad)))
          .as(bad)
          .isInstanceOfSatisfying(SeException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("table name");
    }
    assertThatThrownBy(() -> TableLocationPolicy.checkName("", "table name"))
        .hasMessageContaining("table name must not be empty");
    assertThatThrownBy(() -> TableLocationPolicy.checkIdentifier(TableIdentifier.of(Namespace.of("a", ".."), "t")))
        .hasMessageContaining("namespace level '..' is not allowed");
    assertThatThrownBy(() -> TableLocationPolicy.checkIdentifier(TableIdentifier.of(Namespace.empty(), "t")))
        .hasMessageContaining("a namespace is required");
  }

  private static void assertRefused(LocationConfinement c, String location, String message) {
    assertThat(c.contains(location)).as(location).isFalse();
    assertThatThrownBy(() -> c.check(location, "table location"))
        .as(location)
        .isInstanceOfSatisfying(SeException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining(message);
  }
}
