package io.storageengine.query;

import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.NettyServerBuilder;
import io.storageengine.duckdb.DuckRuntime;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightGrpcUtils;
import org.apache.arrow.memory.BufferAllocator;

/** Hosts the producer as the server will: Flight service inside a plain gRPC server, with the interceptor. */
final class TestQueryServer implements AutoCloseable {
  final DuckRuntime duckdb;
  final QueryFlightSqlProducer producer;
  private final Server server;
  private final ExecutorService executor;

  TestQueryServer(BufferAllocator allocator, TestWarehouse warehouse, Path localDirectory) throws IOException {
    duckdb = DuckRuntime.open(localDirectory, DuckRuntime.DEFAULT_FILE_CACHE_BYTES);
    producer = new QueryFlightSqlProducer(allocator, warehouse, duckdb,
        // Not demoted within a test's long queries: a demoted query's database is closed rather
        // than returned to the pool, which the cancellation tests watch (QueryLimitsTest checks demotion).
        QueryConfig.defaults().withThreads(1).withMemoryLimit("256MB")
            .withLimits(QueryLimits.defaults().withDemotion(Duration.ofMinutes(10), 10)));
    executor = Executors.newFixedThreadPool(4);
    server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .addService(ServerInterceptors.intercept(
            FlightGrpcUtils.createFlightService(allocator, producer, null, new ContextPropagatingExecutorService(executor)),
            new QueryMetadataInterceptor()))
        .build()
        .start();
  }

  int port() {
    return server.getPort();
  }

  @Override
  public void close() throws Exception {
    server.shutdownNow();
    server.awaitTermination(10, TimeUnit.SECONDS);
    executor.shutdownNow();
    producer.close();
    duckdb.close();
  }
}
