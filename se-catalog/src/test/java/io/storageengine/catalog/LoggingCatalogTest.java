package io.storageengine.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

class LoggingCatalogTest {
  @TempDir Path dir;
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  private final Logger logger = (Logger) LoggerFactory.getLogger(LoggingCatalog.class);
  private final List<String> events = new ArrayList<>();
  private LoggingCatalog catalog;

  @BeforeEach
  void open() {
    logs.start();
    logger.addAppender(logs);
    logger.setLevel(Level.DEBUG);
    Catalog raw = new CatalogFactory(Optional.of(dir)).build("cat", CatalogConfig.embedded());
    catalog = new LoggingCatalog("cat", raw, (id, op) -> {
      events.add("begin " + id + " " + op);
      return failure -> events.add("end " + op + " " + (failure == null ? "ok" : failure.getClass().getSimpleName()));
    });
  }

  @AfterEach
  void close() throws Exception {
    catalog.close();
    logger.detachAppender(logs);
    logger.setLevel(null);
  }

  @Test
  void logsOperationsWithoutArguments() {
    catalog.createNamespace(Namespace.of("ns"), Map.of("owner-password", "hunter2"));
    catalog.createTable(TableIdentifier.of("ns", "t"), TableSpecParser.parseSchema("id int"));
    assertThat(catalog.tableExists(TableIdentifier.of("ns", "t"))).isTrue();

    assertThat(events).containsExactly(
        "begin cat createNamespace", "end createNamespace ok",
        "begin cat createTable", "end createTable ok",
        "begin cat tableExists", "end tableExists ok");
    assertThat(logs.list).extracting(ILoggingEvent::getFormattedMessage)
        .anySatisfy(m -> assertThat(m).matches("catalog cat createNamespace ok in \\d+ ms"))
        .allSatisfy(m -> assertThat(m).doesNotContain("hunter2").doesNotContain("owner-password"));
    assertThat(logs.list).extracting(ILoggingEvent::getLevel).containsOnly(Level.DEBUG);
  }

  @Test
  void notFoundIsDebugAndRealFailuresAreWarn() throws Exception {
    assertThatThrownBy(() -> catalog.loadNamespaceMetadata(Namespace.of("missing")))
        .isInstanceOf(NoSuchNamespaceException.class)
        .hasMessageContaining("missing");
    assertThat(logs.list.get(0).getLevel()).isEqualTo(Level.DEBUG);
    assertThat(logs.list.get(0).getFormattedMessage()).startsWith("catalog cat loadNamespaceMetadata not_found in ");

    catalog.close();
    assertThatThrownBy(() -> catalog.listNamespaces()).hasMessageContaining("closed");
    ILoggingEvent last = logs.list.get(logs.list.size() - 1);
    assertThat(last.getLevel()).isEqualTo(Level.WARN);
    assertThat(last.getFormattedMessage()).startsWith("catalog cat listNamespaces failed in ");
    assertThat(events).contains("end loadNamespaceMetadata NoSuchNamespaceException");
  }

  @Test
  void aFailingListenerDoesNotBreakTheCatalog() {
    LoggingCatalog withBadListener = new LoggingCatalog("cat", catalog.delegate(), (id, op) -> {
      throw new IllegalStateException("tracer down");
    });
    assertThat(withBadListener.listNamespaces()).isEmpty();
    assertThat(withBadListener.name()).isEqualTo("cat");
  }
}
