package io.storageengine.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.storageengine.common.Redaction;
import io.storageengine.common.SeException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CatalogFactoryTest {
  @TempDir Path dir;

  @Test
  void restPropertiesPassThrough() {
    CatalogConfig config = CatalogConfig.rest("https://polaris.example.com/api/catalog").withWarehouse("prod")
        .withProperties(Map.of("credential", "id:secret", "oauth2-server-uri", "https://auth/token",
            "scope", "PRINCIPAL_ROLE:ALL", "header.X-Iceberg-Access-Delegation", "vended-credentials",
            "s3.endpoint", "http://minio:9000", "token", "t"));
    Map<String, String> props = new CatalogFactory(Optional.empty()).catalogProperties("p", config);
    assertThat(props).containsAllEntriesOf(config.properties())
        .containsEntry("uri", "https://polaris.example.com/api/catalog")
        .containsEntry("warehouse", "prod")
        .containsEntry("io-impl", "io.storageengine.catalog.TracingFileIO")
        .containsEntry("se.io.delegate-impl", "org.apache.iceberg.io.ResolvingFileIO");
  }

  @Test
  void postgresUriAndJdbcPropertiesPassThrough() {
    CatalogConfig config = CatalogConfig.sql("jdbc:postgresql://db:5432/iceberg", "s3://bucket/wh")
        .withProperties(Map.of("jdbc.user", "ice", "jdbc.password", "pw", "io-impl", "org.apache.iceberg.aws.s3.S3FileIO"));
    Map<String, String> props = new CatalogFactory(Optional.empty()).catalogProperties("pg", config);
    assertThat(props).containsEntry("uri", "jdbc:postgresql://db:5432/iceberg")
        .containsEntry("warehouse", "s3://bucket/wh")
        .containsEntry("jdbc.user", "ice")
        .containsEntry("jdbc.password", "pw")
        .containsEntry("jdbc.schema-version", "V1")
        .containsEntry("io-impl", "io.storageengine.catalog.TracingFileIO")
        .containsEntry("se.io.delegate-impl", "org.apache.iceberg.aws.s3.S3FileIO")
        .doesNotContainKeys("jdbc.journal_mode", "jdbc.busy_timeout");
  }

  @Test
  void sqliteGetsConcurrencySettings() {
    Map<String, String> props = new CatalogFactory(Optional.of(dir)).catalogProperties("e", CatalogConfig.embedded());
    assertThat(props).containsEntry("uri", "jdbc:sqlite:" + dir.toAbsolutePath().resolve("e/catalog.db"))
        .containsEntry("warehouse", "file://" + dir.toAbsolutePath().resolve("e/warehouse"))
        .containsEntry("jdbc.journal_mode", "WAL")
        .containsEntry("jdbc.busy_timeout", "30000")
        .containsEntry("jdbc.schema-version", "V1");
  }

  @Test
  void aConfigurationNamingTracingFileIoKeepsItsDelegate() {
    CatalogConfig config = CatalogConfig.sql("jdbc:sqlite:" + dir.resolve("c.db"), "file:" + dir)
        .withProperties(Map.of("io-impl", TracingFileIO.class.getName(),
            "se.io.delegate-impl", "org.apache.iceberg.hadoop.HadoopFileIO"));
    Map<String, String> props = new CatalogFactory(Optional.empty()).catalogProperties("t", config);
    assertThat(props).containsEntry("io-impl", TracingFileIO.class.getName())
        .containsEntry("se.io.delegate-impl", "org.apache.iceberg.hadoop.HadoopFileIO");
  }

  @Test
  void theDelegatePropertyIsNotASecret() {
    assertThat(Redaction.isSecretName(TracingFileIO.DELEGATE_IMPL)).isFalse();
    assertThat(CatalogRedaction.text("jdbc:sqlite:/x?se.io.delegate-impl=org.apache.iceberg.io.ResolvingFileIO"))
        .isEqualTo("jdbc:sqlite:/x?se.io.delegate-impl=org.apache.iceberg.io.ResolvingFileIO");
  }

  @Test
  void embeddedWithoutRootIsRefused() {
    CatalogFactory factory = new CatalogFactory(Optional.empty());
    assertThat(factory.supports(CatalogConfig.Type.EMBEDDED)).isFalse();
    assertThatThrownBy(() -> factory.build("w", CatalogConfig.embedded()))
        .isInstanceOf(SeException.class)
        .hasMessage("catalog 'w': type embedded needs cluster storage on a local file system "
            + "(the fs object store); use type rest or sql");
  }
}
