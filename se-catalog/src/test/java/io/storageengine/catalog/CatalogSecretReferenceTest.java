package io.storageengine.catalog;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.storageengine.common.ErrorCode;
import io.storageengine.common.Json;
import io.storageengine.common.SeException;
import io.storageengine.objectstore.MemoryObjectStore;
import io.storageengine.secretstore.ExternalSecretStore;
import io.storageengine.secretstore.FileSecretStore;
import io.storageengine.secretstore.MemorySecretStore;
import io.storageengine.secretstore.ReferenceResolver;
import io.storageengine.secretstore.SecretStoreKey;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.catalog.Namespace;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** Catalog configs holding {@code secret-ref:} pointers: only the pointer is stored, the value is read at build time. */
class CatalogSecretReferenceTest {
  private static final String PASSWORD = "pw-hunter2-7f3a";

  /** The external store: the in-memory backend, with the store's names used as they are. */
  private static final class NamedMemoryStore implements ExternalSecretStore {
    final MemorySecretStore delegate = new MemorySecretStore();

    @Override public Optional<Secret> get(String key) { return delegate.get(key); }
    @Override public boolean create(String key, byte[] value) { return delegate.create(key, value); }
    @Override public void put(String key, byte[] value) { delegate.put(key, value); }
    @Override public void delete(String key) { delegate.delete(key); }
    @Override public String describe() { return "vault:test"; }
    @Override public Optional<byte[]> readReference(String name) { return delegate.get(name).map(Secret::value); }
  }

  @TempDir Path dir;
  private final MemoryObjectStore objects = new MemoryObjectStore();
  private final NamedMemoryStore vault = new NamedMemoryStore();
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
  private TenantCatalogRegistry registry;

  @BeforeEach
  void open() {
    logs.start();
    root.addAppender(logs);
    root.setLevel(Level.DEBUG);
    vault.put("prod/db", PASSWORD.getBytes(UTF_8));
    registry = TenantCatalogRegistry.builder(new FileSecretStore(objects, SecretStoreKey.random()))
        .embeddedRoot(Optional.of(dir.resolve("embedded")))
        .secretResolver(ReferenceResolver.of(Map.of("vault", vault)))
        .build();
  }

  @AfterEach
  void close() {
    registry.close();
    root.detachAppender(logs);
  }

  private CatalogConfig sqlWith(String passwordValue) {
    return new CatalogConfig(CatalogConfig.Type.SQL, "jdbc:sqlite:" + dir.resolve("c.db"),
        dir.resolve("wh").toUri().toString(), Map.of("jdbc.password", passwordValue));
  }

  @Test
  void onlyTheReferenceIsStoredAndTheValueIsReadWhenTheCatalogIsBuilt() {
    registry.create("tenant", sqlWith("secret-ref:vault://prod/db"));
    assertThat(registry.config("tenant").properties()).containsEntry("jdbc.password", "secret-ref:vault://prod/db");
    assertThat(Json.toString(registry.config("tenant").toResponseJson("tenant"))).doesNotContain(PASSWORD)
        .contains("**redacted**");
    Map<String, String> built = registry.factory().catalogProperties("tenant", registry.config("tenant"));
    assertThat(built).containsEntry("jdbc.password", PASSWORD);
    // The catalog is built (the secret read) and used: the namespace is simply not there.
    assertThatThrownBy(() -> registry.catalog("tenant").listTables(Namespace.of("none")))
        .isInstanceOf(org.apache.iceberg.exceptions.NoSuchNamespaceException.class)
        .hasMessage("Namespace does not exist: none");
    assertThat(logs.list).extracting(ILoggingEvent::getFormattedMessage).isNotEmpty()
        .noneMatch(line -> line.contains(PASSWORD));
  }

  @Test
  void aMissingReferencedSecretIsAClearErrorNamingThePropertyAndReference() {
    registry.create("tenant", sqlWith("secret-ref:vault://prod/none"));
    assertThatThrownBy(() -> registry.catalog("tenant"))
        .isInstanceOf(SeException.class)
        .hasMessage("catalog 'tenant': property 'jdbc.password': secret reference secret-ref:vault://prod/none: "
            + "no such secret in vault:test")
        .satisfies(e -> assertThat(((SeException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
  }

  @Test
  void aReferenceToAnUnconfiguredStoreSaysSo() {
    CatalogFactory plain = new CatalogFactory(Optional.empty());
    assertThatThrownBy(() -> plain.catalogProperties("tenant", sqlWith("secret-ref:aws-sm://prod/db")))
        .isInstanceOf(SeException.class)
        .hasMessage("catalog 'tenant': property 'jdbc.password': secret reference secret-ref:aws-sm://prod/db: "
            + "no aws-sm secret store is configured on this server (see --secret-store.* options)");
  }

  @Test
  void malformedReferencesAreRefusedAtCreate() {
    assertThatThrownBy(() -> sqlWith("secret-ref:keychain://x"))
        .isInstanceOf(SeException.class)
        .hasMessage("field 'config.properties.jdbc.password': secret reference: unknown store 'keychain' "
            + "(expected aws-sm, azure-kv, gcp-sm or vault)");
    assertThatThrownBy(() -> sqlWith("secret-ref:vault:/x"))
        .isInstanceOf(SeException.class)
        .hasMessageStartingWith("field 'config.properties.jdbc.password': secret reference must look like "
            + "secret-ref:<store>://<name>");
  }
}
