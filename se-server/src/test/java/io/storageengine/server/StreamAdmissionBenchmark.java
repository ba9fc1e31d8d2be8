package io.storageengine.server;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Stream admission under many concurrent streams against a real {@code se dev} server on
 * 127.0.0.1 (fs store, embedded catalog). A program, not a test: prints one JSON line a round.
 *
 * <p>Arguments: streams (default 500), tables (default 50), client connections (default 10),
 * rounds (default 1): the burst is repeated that many times on the same server, one line each,
 * so later rounds show admission once the JVM has compiled the paths a long-running server has;
 * mode {@code native} (default) or {@code bulk} (Flight SQL bulk ingest, see
 * {@link StreamAdmission.Mode}).
 */
public final class StreamAdmissionBenchmark {
  private StreamAdmissionBenchmark() {}

  public static void main(String[] args) throws Exception {
    int streams = args.length > 0 ? Integer.parseInt(args[0]) : 500;
    int tables = args.length > 1 ? Integer.parseInt(args[1]) : 50;
    int clients = args.length > 2 ? Integer.parseInt(args[2]) : 10;
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 1;
    StreamAdmission.Mode mode = args.length > 4
        ? StreamAdmission.Mode.valueOf(args[4].toUpperCase(java.util.Locale.ROOT))
        : StreamAdmission.Mode.NATIVE;
    Path dir = Files.createTempDirectory("se-admission");
    try (EngineServer server = EngineServer.start(ServerConfig.defaults()
        .with(ConfigKey.SERVER_ADDRESS, "127.0.0.1:0")
        .with(ConfigKey.DATA_DIR, dir.toString()), Role.DEV)) {
      Catalog catalog = server.registry().catalog("warehouse");
      List<TableIdentifier> ids = StreamAdmission.createTables(catalog, tables);
      for (int round = 1; round <= rounds; round++) {
        System.out.println(StreamAdmission.run(mode, server.port(), catalog, "warehouse", ids, streams,
            clients).json());
      }
    }
  }
}
