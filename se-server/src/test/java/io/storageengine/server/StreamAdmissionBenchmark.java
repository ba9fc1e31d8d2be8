package io.storageengine.server;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
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
 *
 * <p>With {@code -Dse.admission.spawn=<path of the se launcher>} the server is a {@code se dev}
 * process of its own ({@link SpawnedDevServer}; more arguments in
 * {@code -Dse.admission.server-args}, space-separated): the clients of this JVM first run one
 * burst against a throwaway server so that their own code is compiled, then the rounds run
 * against a fresh server, which measures a freshly started server meeting warm clients (a
 * restart with every producer reconnecting; {@code -Dse.admission.warm-clients=false} skips the
 * throwaway server, so clients and server both start cold). Each round's line then also has the server's
 * startup time and the CPU seconds the server process spent in the burst (from the streams'
 * start until every stream landed; {@code burst_from_ms}/{@code burst_to_ms}: epoch milliseconds); with
 * {@code -Dse.admission.cpu-by-thread=true} also the server's CPU seconds by thread group
 * ({@code server_cpu_s_by_thread}, from {@code /proc}: JIT compiler and GC threads included).
 * {@code -Dse.admission.server-java-opts} (space-separated) go to the measured server's JVM only.
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
    String launcher = System.getProperty("se.admission.spawn");
    if (launcher != null) {
      spawned(Path.of(launcher), mode, streams, tables, clients, rounds);
      return;
    }
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

  private static void spawned(Path launcher, StreamAdmission.Mode mode, int streams, int tables,
      int clients, int rounds) throws Exception {
    String extra = System.getProperty("se.admission.server-args", "").trim();
    List<String> args = extra.isEmpty() ? List.of() : List.of(extra.split("\\s+"));
    if (!"false".equals(System.getProperty("se.admission.warm-clients"))) {
      try (SpawnedDevServer throwaway = SpawnedDevServer.start(launcher, args)) {
        List<TableIdentifier> ids = StreamAdmission.createTables(throwaway.catalog(), tables);
        StreamAdmission.run(mode, throwaway.port(), throwaway.catalog(), "warehouse", ids, streams,
            clients);
      }
    }
    boolean byThread = Boolean.getBoolean("se.admission.cpu-by-thread");
    try (SpawnedDevServer server = SpawnedDevServer.start(launcher, args,
        System.getProperty("se.admission.server-java-opts", ""))) {
      List<TableIdentifier> ids = StreamAdmission.createTables(server.catalog(), tables);
      for (int round = 1; round <= rounds; round++) {
        // The server's CPU over the burst alone (from the streams' start until all landed).
        double[] cpu = new double[2];
        long[] at = new long[2];
        List<Map<Long, SpawnedDevServer.ThreadCpu>> threads = new java.util.ArrayList<>();
        String result = StreamAdmission.run(mode, server.port(), server.catalog(), "warehouse", ids,
            streams, clients, () -> {
              at[0] = System.currentTimeMillis();
              cpu[0] = server.cpuSeconds();
              threads.add(byThread ? server.threadCpu() : Map.of());
            }, () -> {
              cpu[1] = server.cpuSeconds();
              threads.add(byThread ? server.threadCpu() : Map.of());
              at[1] = System.currentTimeMillis();
            }).json();
        String groups = byThread
            ? ",\"server_cpu_s_by_thread\":" + SpawnedDevServer.cpuByThreadGroup(threads.get(0), threads.get(1))
            : "";
        System.out.println(String.format(java.util.Locale.ROOT,
            "{\"server\":\"spawned\",\"round\":%d,\"burst_from_ms\":%d,\"burst_to_ms\":%d,\"startup_s\":%.1f,\"server_cpu_s\":%.2f%s,\"result\":%s}",
            round, at[0], at[1], server.startupSeconds(), cpu[1] - cpu[0], groups, result));
      }
    }
  }
}
