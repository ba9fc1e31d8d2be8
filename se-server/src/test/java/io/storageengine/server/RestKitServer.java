package io.storageengine.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts a real engine server (dev role, embedded catalog {@code warehouse}) for Iceberg's REST
 * Compatibility Kit and points the kit at its REST base URI {@code /catalogs/warehouse/v1}.
 *
 * <p>The kit reads its client properties from system properties ({@code uri}) when its own
 * {@code @BeforeAll} runs; extension callbacks run before that. {@code rck.local=false} keeps the
 * kit from starting Iceberg's reference server in place of ours: it is read when the kit's own
 * extension runs, after this class is initialized (on registration).
 */
final class RestKitServer implements BeforeAllCallback, AfterAllCallback {
  static {
    System.setProperty("rck.local", "false");
  }

  private Path dir;
  private EngineServer server;

  @Override
  public void beforeAll(ExtensionContext context) throws IOException {
    dir = Files.createTempDirectory("se-rck");
    server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString()), Role.DEV);
    System.setProperty("uri", "http://127.0.0.1:" + server.port() + "/catalogs/warehouse");
  }

  /**
   * A location under the tenant's storage root, for the kit's requested table and view
   * locations (its defaults, under {@code /tmp}, lie outside the root and are refused):
   * {@code <root>/requested/<run>/<parts>}. A new {@code run} per test, since a location a
   * dropped table left files in is never given to a new table.
   */
  String requestedLocation(int run, String... parts) {
    StringBuilder location = new StringBuilder("file://" + dir.toAbsolutePath() + "/embedded/warehouse/warehouse/requested/" + run);
    for (String part : parts) {
      location.append('/').append(part);
    }
    return location.toString();
  }

  @Override
  public void afterAll(ExtensionContext context) throws IOException {
    System.clearProperty("uri");
    if (server != null) {
      server.close();
    }
    if (dir != null) {
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
